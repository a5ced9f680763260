# SPDX-License-Identifier: MIT
# gslbd top-level Makefile.  It is committed: on a fresh clone the first
# `make` installs missing Debian packages (as root; otherwise it names them),
# runs autoreconf and ./configure, then builds.
#
#   make            build gslbd into build/
#   make run        serve the demo zone on 127.0.0.1@5300 (UDP and TCP)
#   make check      unit, query, fuzz-replay and integration tests
#   make check SAN=address,undefined   the same under sanitizers (build-san/)
#   make check SAN=thread   the same under ThreadSanitizer (build-san-thread/)
#   make install prefix=DIR
#   make fuzz       libFuzzer binaries of the query, zone and configuration
#                   fuzzers (clang)
#   make bench      the dnsperf comparison of docs/BENCHMARKS.md
#   make bench-gslb the GSLB benchmark of docs/BENCHMARKS.md (bench/gslb.sh)
#   make bench-compare  server CPU per answered query, exact (cpuacct):
#                   gslbd against knotd, gdnsd and a UDP reflector
#                   (bench/compare.sh; needs root and cgroup v1)
#   make geoip      rebuild geoip/demo.mmdb from geoip/demo.txt (needs
#                   libmaxmind-db-writer-perl; see geoip/README.md)

-include config.mk

# Missing Debian packages are installed (as root) before anything else:
# the build's when not configured yet, the tests' too for `make check`.
# contrib/deps.sh shows apt's progress on stderr and prints on stdout only
# the reason it cannot install, which then ends make as its last line.
NO_DEPS_GOALS := clean distclean
ifeq ($(filter-out $(NO_DEPS_GOALS),$(MAKECMDGOALS))$(if $(MAKECMDGOALS),,all),)
else
ifeq ($(wildcard config.mk),)
DEPS_ERR := $(shell ./contrib/deps.sh --build)
else ifneq ($(filter check,$(MAKECMDGOALS)),)
DEPS_ERR := $(shell ./contrib/deps.sh)
endif
ifneq ($(strip $(DEPS_ERR)),)
$(error $(DEPS_ERR))
endif
endif

ifeq ($(wildcard config.mk),)
# Not configured yet: every goal first runs configure, then make restarts.
config.mk: config.mk.in configure
	./configure
configure: configure.ac
	autoreconf -fi
endif

prefix ?= /usr/local
DESTDIR ?=
# /etc for a system install (prefix /usr), PREFIX/etc otherwise.
sysconfdir ?= $(if $(filter /usr,$(prefix)),/etc,$(prefix)/etc)
unitdir ?= $(prefix)/lib/systemd/system
datadir ?= $(prefix)/share
completionsdir ?= $(datadir)/bash-completion/completions
B := build
SANFLAGS :=
ifneq ($(strip $(SAN)),)
# ThreadSanitizer cannot be mixed with the others: its own directory.
B := build-san$(if $(findstring thread,$(SAN)),-thread)
SANFLAGS := -fsanitize=$(SAN) -fno-omit-frame-pointer -fno-sanitize-recover=all
endif

WARN := -Wall -Wextra -Wshadow -Wpointer-arith -Wno-unused-parameter \
        -Wstrict-prototypes -Wmissing-prototypes
ALL_CFLAGS = -std=gnu11 -D_GNU_SOURCE -g -O2 $(WARN) $(DEV_CFLAGS) $(SANFLAGS) -Isrc \
             $(DEP_CFLAGS) $(CFLAGS)
ALL_LDFLAGS = $(SANFLAGS) $(LDFLAGS)
LIBS_ALL = $(DEP_LIBS) -lpthread -lm

# The daemon's code by concern (src/README.md): every folder but ctl/ goes
# into libgslbd.a, which gslbd, gslbctl, the unit tests and the fuzzers
# link; ctl/ is gslbctl's own.
DIRS := common dns gslb health store stats
LIB_SRC := $(foreach d,$(DIRS),$(wildcard src/$(d)/*.c))
LIB_OBJ := $(LIB_SRC:src/%.c=$(B)/obj/%.o)
CTL_SRC := $(wildcard src/ctl/*.c)
CTL_OBJ := $(CTL_SRC:src/%.c=$(B)/obj/%.o)
HDRS := $(wildcard src/*/*.h) src/config.h
UNIT_SRC := $(wildcard tests/unit/check_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(B)/tests/%)
MAN_IN := $(wildcard man/*.in)
MAN := $(MAN_IN:.in=)

.PHONY: all run check unit fuzz-replay integ install uninstall clean distclean fuzz bench bench-gslb bench-compare man geoip
all: $(B)/gslbd $(B)/gslbctl man

$(B)/obj/%.o: src/%.c $(HDRS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<
$(B)/libgslbd.a: $(LIB_OBJ)
	rm -f $@; ar rcs $@ $^
$(B)/gslbd: $(B)/obj/main.o $(B)/libgslbd.a
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS_ALL)
$(B)/gslbctl: $(CTL_OBJ) $(B)/libgslbd.a
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS_ALL)

man: $(MAN)
man/%: man/%.in
	sed -e 's|@VERSION@|$(PACKAGE_VERSION)|g' -e 's|@PREFIX@|$(prefix)|g' $< > $@

# The demo: the weight store is created with the demo services, nodes and
# weights on the first run, then left to what gslbctl makes of it.
run: all
	@if [ ! -e run/db/data.mdb ]; then \
	  $(B)/gslbctl -c zones/gslbd.conf apply zones/demo-gslb.json; fi
	$(B)/gslbd -c zones/gslbd.conf

# Tests ----------------------------------------------------------------
$(B)/tests/check_%: tests/unit/check_%.c $(wildcard tests/unit/*.h) \
                   $(HDRS) $(B)/libgslbd.a
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(CHECK_CFLAGS) -Itests/unit -o $@ $< $(B)/libgslbd.a \
	  $(ALL_LDFLAGS) $(CHECK_LIBS) $(LIBS_ALL)
# The fuzz targets (tests/fuzz/fuzz_*.c) linked with the replay main, so
# that `make check` runs their corpora without libFuzzer: fuzz_query
# replays tests/fuzz/corpus, fuzz_zone and fuzz_conf their corpus-*.
FUZZ_DEPS := tests/fuzz/replay.c tests/unit/store_fixture.h $(HDRS) $(B)/libgslbd.a
$(B)/tests/fuzz_replay: tests/fuzz/fuzz_query.c $(FUZZ_DEPS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -o $@ tests/fuzz/fuzz_query.c tests/fuzz/replay.c \
	  $(B)/libgslbd.a $(ALL_LDFLAGS) $(LIBS_ALL)
$(B)/tests/fuzz_%_replay: tests/fuzz/fuzz_%.c $(FUZZ_DEPS)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -o $@ $< tests/fuzz/replay.c \
	  $(B)/libgslbd.a $(ALL_LDFLAGS) $(LIBS_ALL)
FUZZ_REPLAY := $(B)/tests/fuzz_replay $(B)/tests/fuzz_zone_replay \
               $(B)/tests/fuzz_conf_replay

check: all $(UNIT_BIN) $(FUZZ_REPLAY)
	@B=$(B) TESTPORT=$(TESTPORT) SAN="$(SAN)" tests/run.sh

# libFuzzer binaries $(B)/fuzz_query, $(B)/fuzz_zone and $(B)/fuzz_conf.
FUZZ_TARGETS := query zone conf
fuzz: $(B)/libgslbd.a
	for t in $(FUZZ_TARGETS); do \
	  clang -std=gnu11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined \
	    -Isrc $(DEP_CFLAGS) -o $(B)/fuzz_$$t tests/fuzz/fuzz_$$t.c $(LIB_SRC) \
	    $(LIBS_ALL) || exit 1; \
	done

bench: all
	bench/run.sh
bench-gslb: all
	bench/gslb.sh
bench-compare: all
	bench/compare.sh

# The demo MaxMind DB is committed; this rebuilds it from its source.
geoip:
	perl geoip/build-demo.pl geoip/demo.txt geoip/demo.mmdb

# Installs the programs, man pages, the systemd unit, and, in
# SYSCONFDIR/gslbd, the commented sample configuration and an example zone
# (with the demo GeoIP database in DATADIR/gslbd), which pass --check as
# installed.  An existing gslbd.conf is never overwritten.
CONF_DIR = $(DESTDIR)$(sysconfdir)/gslbd
install: all
	install -d $(DESTDIR)$(prefix)/sbin $(DESTDIR)$(prefix)/bin \
	  $(DESTDIR)$(prefix)/share/man/man5 $(DESTDIR)$(prefix)/share/man/man8 \
	  $(DESTDIR)$(unitdir) $(CONF_DIR) $(DESTDIR)$(datadir)/gslbd \
	  $(DESTDIR)$(completionsdir)
	install -m 755 $(B)/gslbd $(DESTDIR)$(prefix)/sbin/gslbd
	install -m 755 $(B)/gslbctl $(DESTDIR)$(prefix)/bin/gslbctl
	for m in $(MAN); do s=$${m##*.}; \
	  install -m 644 $$m $(DESTDIR)$(prefix)/share/man/man$$s/; done
	sed -e 's|@SBINDIR@|$(prefix)/sbin|g' -e 's|@SYSCONFDIR@|$(sysconfdir)|g' \
	  contrib/gslbd.service.in > $(DESTDIR)$(unitdir)/gslbd.service
	chmod 644 $(DESTDIR)$(unitdir)/gslbd.service
	install -m 644 geoip/demo.mmdb $(DESTDIR)$(datadir)/gslbd/demo.mmdb
	install -m 644 contrib/gslbctl.bash-completion $(DESTDIR)$(completionsdir)/gslbctl
	sed -e 's|/var/lib/GeoIP/GeoIP2-City.mmdb|$(datadir)/gslbd/demo.mmdb|' \
	  contrib/gslbd.conf.sample > $(CONF_DIR)/gslbd.conf.sample
	chmod 644 $(CONF_DIR)/gslbd.conf.sample
	install -m 644 contrib/cdn.example.com.zone $(CONF_DIR)/cdn.example.com.zone
	[ -e $(CONF_DIR)/gslbd.conf ] || install -m 644 $(CONF_DIR)/gslbd.conf.sample $(CONF_DIR)/gslbd.conf

# Removes what install wrote; gslbd.conf only while it is still the
# sample, unchanged.
uninstall:
	rm -f $(DESTDIR)$(prefix)/sbin/gslbd $(DESTDIR)$(prefix)/bin/gslbctl \
	  $(DESTDIR)$(unitdir)/gslbd.service $(DESTDIR)$(datadir)/gslbd/demo.mmdb \
	  $(CONF_DIR)/cdn.example.com.zone $(DESTDIR)$(completionsdir)/gslbctl
	for m in $(MAN); do s=$${m##*.}; b=$${m##*/}; \
	  rm -f $(DESTDIR)$(prefix)/share/man/man$$s/$$b; done
	if cmp -s $(CONF_DIR)/gslbd.conf $(CONF_DIR)/gslbd.conf.sample; then \
	  rm -f $(CONF_DIR)/gslbd.conf; fi
	rm -f $(CONF_DIR)/gslbd.conf.sample
	-rmdir $(CONF_DIR) $(DESTDIR)$(datadir)/gslbd 2>/dev/null

clean:
	rm -rf build build-san build-san-thread $(MAN) tests/tmp
distclean: clean
	rm -rf config.mk config.status config.log configure autom4te.cache \
	  aclocal.m4 src/config.h src/config.h.in src/config.h.in~ compile \
	  install-sh missing
