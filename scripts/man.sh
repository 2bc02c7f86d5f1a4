#!/usr/bin/env bash
# make man: the command pages from swift-argument-parser's manual plugin (`swift package
# generate-manual`, which builds the tools and reads their --help), into .build/man: dockd(8),
# dockctl(1), dock-sim(1), dock-bench(1), dock-driver-probe(1); dock-camera(1) and its completions
# (scripts/camera_pages.sh, into .build/man/completions). dockd.conf(5) is written by hand
# (docs/man/dockd.conf.5). Dated from debian/changelog's latest entry, so the pages of a release
# do not change with the day they are built.
set -euo pipefail
cd "$(dirname "$0")/.."
out=.build/man
plugin=.build/plugins/GenerateManual/outputs
date=$(date -u -d "$(sed -n 's/^ -- .*>  //p' debian/changelog | head -1)" +%F)
generate() { # SECTION: every tool's page in that section
    swift package --disable-sandbox generate-manual --configuration debug --section "$1" --date "$date" \
        --authors "the dockd authors" > "$out/generate-manual-$1.log" 2>&1 \
        || { cat "$out/generate-manual-$1.log" >&2; exit 1; }
}
mkdir -p "$out"
generate 8
cp "$plugin/dockd/dockd.8" "$out/dockd.8"
generate 1
# Each tool's executable target is TOOL-main (its code is the library TOOL, which dockd runs too).
for t in dockctl dock-sim dock-bench dock-driver-probe; do cp "$plugin/$t-main/$t.1" "$out/$t.1"; done
# A blank line in a command's discussion is a paragraph break for people; for groff it is an "empty
# input line" (lintian warns): make it mdoc's .Pp.
sed -i 's/^$/.Pp/' "$out"/*.[18]
# dock-camera (Python): its page and completions from its argparse parser (man(7) macros: no
# mdoc .Pp for it).
bash scripts/camera_pages.sh "$out" "$date"
echo "man pages in $out: $(cd "$out" && ls ./*.[18] | tr '\n' ' ')"
