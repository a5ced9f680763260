#!/usr/bin/perl
# SPDX-License-Identifier: MIT
# Builds a small MaxMind DB (.mmdb) from a readable network list, for the
# gslbd demo and tests.  Needs Debian's libmaxmind-db-writer-perl.
#
#   perl geoip/build-demo.pl SOURCE.txt OUTPUT.mmdb
#
# SOURCE holds one network per line, in whitespace-separated columns:
#
#   NETWORK          REGION  ISP   ASN    COUNTRY  SUBDIVISION
#   36.110.0.0/16    cn-bj   ctcc  4134   CN       BJ
#
# '-' leaves a column's field out of the record; '#' starts a comment;
# trailing columns may be omitted.  Each network becomes the record
#
#   { region => REGION, isp => ISP, autonomous_system_number => ASN,
#     country => { iso_code => COUNTRY },
#     subdivisions => [ { iso_code => SUBDIVISION } ] }
#
# so that gslbd can read the purpose-built fields ([ region ], [ isp ]) or
# GeoIP2-style ones ([ subdivisions, 0, iso_code ] and
# [ autonomous_system_number ] with maps).  Networks are inserted from the
# shortest prefix to the longest, so a more specific network always wins
# over the one that contains it, whatever the line order.  The database is
# IPv6 with IPv4 in ::/96 (IPv4-mapped, 6to4 and Teredo alias to it), and
# reserved ranges are allowed, so documentation addresses can be used.
use strict;
use warnings;

use MaxMind::DB::Writer::Tree;
use Net::Works::Address;
use Net::Works::Network;

die "usage: $0 SOURCE OUTPUT.mmdb\n" unless @ARGV == 2;
my ($src, $out) = @ARGV;

my %types = (
	region                   => 'utf8_string',
	isp                      => 'utf8_string',
	autonomous_system_number => 'uint32',
	country                  => 'map',
	subdivisions             => [ 'array', 'map' ],
	iso_code                 => 'utf8_string',
);

open my $in, '<', $src or die "$src: $!\n";
my @nets;
while (my $line = <$in>) {
	$line =~ s/#.*//;
	my @f = split ' ', $line;
	next unless @f;
	my $where = "$src:$.";
	die "$where: more than 6 columns\n" if @f > 6;
	my ($net, $region, $isp, $asn, $country, $sub) =
	    map { defined $_ && $_ ne '-' ? $_ : undef } @f[0 .. 5];
	my $n = eval { Net::Works::Network->new_from_string(string => $net) };
	die "$where: '$f[0]' is not a network (ADDR/LEN)\n"
	    unless $n && $net =~ m{/\d+$};
	my $addr = eval {
		Net::Works::Address->new_from_string(
			string => (split m{/}, $net)[0]) };
	die "$where: $net has host bits set (the network is "
	    . $n->as_string . ")\n"
	    unless $addr && $addr->as_integer == $n->first->as_integer;
	die "$where: ASN '$asn' is not a number\n"
	    if defined $asn && $asn !~ /^\d+$/;
	my %rec;
	$rec{region} = $region if defined $region;
	$rec{isp} = $isp if defined $isp;
	$rec{autonomous_system_number} = 0 + $asn if defined $asn;
	$rec{country} = { iso_code => $country } if defined $country;
	$rec{subdivisions} = [ { iso_code => $sub } ] if defined $sub;
	die "$where: a network needs at least one field\n" unless %rec;
	push @nets, [ $net, $n->mask_length, \%rec, $. ];
}
close $in;

my $tree = MaxMind::DB::Writer::Tree->new(
	ip_version               => 6,
	record_size              => 24,
	database_type            => 'gslbd-demo',
	languages                => ['en'],
	description              => { en => "gslbd demo networks ($src)" },
	map_key_type_callback    => sub { $types{ $_[0] } },
	alias_ipv6_to_ipv4       => 1,
	remove_reserved_networks => 0,
	merge_strategy           => 'none',
);
# A fixed build time (SOURCE_DATE_EPOCH) makes the output reproducible.
$tree->_set_build_epoch($ENV{SOURCE_DATE_EPOCH})
    if defined $ENV{SOURCE_DATE_EPOCH};

for my $e (sort { $a->[1] <=> $b->[1] || $a->[3] <=> $b->[3] } @nets) {
	$tree->insert_network($e->[0], $e->[2]);
}

my $tmp = "$out.tmp$$";
open my $fh, '>:raw', $tmp or die "$tmp: $!\n";
$tree->write_tree($fh);
close $fh or die "$tmp: $!\n";
rename $tmp, $out or die "$out: $!\n";
