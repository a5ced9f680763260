#!/usr/bin/perl
# SPDX-License-Identifier: MIT
# bench/mmdb-continent.pl: runs geoip/build-demo.pl unchanged, but adds
# continent => { code => ... } to every record that has a country and
# labels the database "GeoIP2-City (...)", for gdnsd-plugin-geoip: its
# maps start at the continent, and it reads subdivisions only from a
# database whose type says City.  gslbd ignores both additions.
#   perl bench/mmdb-continent.pl geoip/build-demo.pl SOURCE OUT.mmdb
use strict; use warnings;
use MaxMind::DB::Writer::Tree;
my %cont = (CN => 'AS', US => 'NA', DE => 'EU', JP => 'AS');
{
  no warnings 'redefine';
  my $new = \&MaxMind::DB::Writer::Tree::new;
  my $ins = \&MaxMind::DB::Writer::Tree::insert_network;
  *MaxMind::DB::Writer::Tree::new = sub {
    my ($c, %a) = @_;
    my $cb = $a{map_key_type_callback};
    $a{map_key_type_callback} = sub { $_[0] eq 'continent' ? 'map' : $_[0] eq 'code' ? 'utf8_string' : $cb->(@_) };
    $a{database_type} = "GeoIP2-City (gslbd bench, " . $a{database_type} . ")"; $new->($c, %a);
  };
  *MaxMind::DB::Writer::Tree::insert_network = sub {
    my ($t, $n, $r) = @_;
    $r->{continent} = { code => $cont{ $r->{country}{iso_code} } // 'AS' } if $r->{country};
    $ins->($t, $n, $r);
  };
}
my $script = shift @ARGV;
$script = "./$script" unless $script =~ m{^/};
do $script or die $@ || "$script: $!";
