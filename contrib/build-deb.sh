#!/bin/bash
# SPDX-License-Identifier: MIT
# Builds the Debian package (debian/) from a copy of the tree, so that the
# build leaves the working tree and its build/ alone:
#
#   contrib/build-deb.sh [OUTDIR]      (make deb: OUTDIR build/deb)
#
# The tree is taken as git sees it, uncommitted changes included.  The
# .deb, .changes and .buildinfo files land in OUTDIR; the build's log is
# OUTDIR/build.log.  Needs dpkg-buildpackage and the Build-Depends of
# debian/control (contrib/deps.sh installs them).
set -eu
cd "$(dirname "$0")/.."
OUT=$(realpath -m "${1:-build/deb}")
VERSION=$(dpkg-parsechangelog -l debian/changelog -S Version)
WORK=$(mktemp -d /tmp/gslbd-debbuild.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
SRC=$WORK/gslbd-$VERSION
mkdir -p "$SRC" "$OUT"
git ls-files -co --exclude-standard | grep -v '^tests/tmp/' |
	tar -cf - -T - | tar -xf - -C "$SRC"
if ! (cd "$SRC" && dpkg-buildpackage -us -uc -b) > "$OUT/build.log" 2>&1; then
	tail -30 "$OUT/build.log" >&2
	echo "build-deb: dpkg-buildpackage failed; the whole log is $OUT/build.log" >&2
	exit 1
fi
mv "$WORK"/gslbd*_"$VERSION"_* "$OUT"/
ls "$OUT"/gslbd_"$VERSION"_*.deb
