#!/usr/bin/env bash
# make deb: out/dockd_VERSION_ARCH.deb, built with dpkg-deb from the tree scripts/install.sh makes
# (PREFIX=/usr), so `make install` and the package hold the same files. The version is the one in
# Sources/DockVersion/DockVersion.swift; Depends comes from dpkg-shlibdeps on the binaries.
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(sed -n 's/.*static let string = "\(.*\)".*/\1/p' Sources/DockVersion/DockVersion.swift)
changelog_version=$(sed -n '1s/^dockd (\([^)]*\)).*/\1/p' debian/changelog)
[ "$version" = "$changelog_version" ] || {
    echo "deb.sh: the version is $version but debian/changelog's latest entry is $changelog_version: add an entry" >&2; exit 1; }
arch=$(dpkg --print-architecture)
stage=.build/deb/dockd
out=out/dockd_${version}_${arch}.deb
rm -rf "$stage" && mkdir -p "$stage/DEBIAN" out
bash scripts/install.sh "$stage" /usr > /dev/null

# Depends: the shared libraries the binaries need, as dpkg-shlibdeps names their packages.
work=.build/deb/shlibdeps
rm -rf "$work" && mkdir -p "$work/debian"
printf 'Source: dockd\n\nPackage: dockd\nArchitecture: any\n' > "$work/debian/control"
binaries=$(for f in "$stage"/usr/bin/*; do file -b "$f" | grep -q '^ELF' && echo "${PWD}/$f"; done)
depends=$(cd "$work" && dpkg-shlibdeps -O $binaries 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || { echo "deb.sh: dpkg-shlibdeps found no dependencies" >&2; exit 1; }
# dockd's packed relocations (DT_RELR: Package.swift's linker settings) need glibc 2.36, a version
# the binary requires with no symbol of it, which dpkg-shlibdeps does not count.
if readelf -V "$stage/usr/bin/dockd" | grep -q GLIBC_ABI_DT_RELR; then
    depends=$(sed -E 's/libc6 \(>= 2\.([0-9]|[12][0-9]|3[0-5])(\.[0-9]+)?\)/libc6 (>= 2.36)/' <<<"$depends")
fi

size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
sed -e "s/@VERSION@/$version/" -e "s/@ARCH@/$arch/" -e "s/@SIZE@/$size/" -e "s/@DEPENDS@/$depends/" \
    debian/control > "$stage/DEBIAN/control"
install -m 0644 debian/conffiles "$stage/DEBIAN/conffiles"
install -m 0755 debian/postinst debian/prerm debian/postrm "$stage/DEBIAN/"
(cd "$stage" && find . -path ./DEBIAN -prune -o -type f -printf '%P\n' | LC_ALL=C sort | xargs md5sum) > "$stage/DEBIAN/md5sums"
# xz at its fastest level: 7 s instead of 70 for a package 15 % larger. Every file root's; the dates of the files are the changelog's, for a reproducible package.
export SOURCE_DATE_EPOCH=$(date -d "$(sed -n 's/^ -- .*>  //p' debian/changelog | head -1)" +%s)
find "$stage" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
dpkg-deb --root-owner-group -Zxz -z1 --build "$stage" "$out" > /dev/null
echo "$out: $(du -h "$out" | cut -f1), Depends: $depends"
