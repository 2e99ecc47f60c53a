#!/bin/sh
# Builds gem5.opt for one of cohtb's machines from a gem5 v24.0.0.1 source tree (docs/gem5.md says how to get
# one): build-gem5.sh SOURCE VARIANT, VARIANT X86 (MESI_Two_Level, the flat machine) or X86_CHI (CHI).
# Niced: it takes every core for about 100 minutes on two. Ends with the binary's path and digest.
set -eu
src=${1:?usage: build-gem5.sh GEM5_SOURCE X86|X86_CHI}
variant=${2:?usage: build-gem5.sh GEM5_SOURCE X86|X86_CHI}
here=$(cd "$(dirname "$0")" && pwd)
cd "$src"
case $variant in
X86) ;;
X86_CHI)   # gem5's X86 options with the CHI protocol: X86_CHI.defconfig beside this script
    [ -f build/X86_CHI/gem5.build/config ] ||
        PATH="$here/bin:/usr/bin:/bin" scons defconfig build/X86_CHI "$here/X86_CHI.defconfig" --ignore-style
    # cohtb's patches to CHI (patches/*.patch, each documented in its header), applied once, exactly (no fuzz):
    # a tree that already has one (patch -R would apply) is left as it is. COHTB_GEM5_STOCK=1 builds stock CHI,
    # the build of the machines recorded before the patches (cohtb/run/gem5.py, STOCK_CHI).
    if [ "${COHTB_GEM5_STOCK:-}" != 1 ]; then
        for p in "$here"/patches/*.patch; do
            [ -f "$p" ] || continue
            patch -p1 -R --dry-run -s -f --fuzz=0 < "$p" > /dev/null 2>&1 || patch -p1 -s -f --fuzz=0 < "$p"
        done
    fi ;;
*) echo "build-gem5.sh: variant $variant: want X86 or X86_CHI" >&2; exit 2 ;;
esac
# Our g++ (bin/g++: reproducible, no debug information), then Debian's python3-config and tools, whatever a
# virtual environment put on PATH.
PATH="$here/bin:/usr/bin:/bin" nice -n 19 scons "build/$variant/gem5.opt" -j"$(nproc)" --ignore-style \
    PYTHON_CONFIG=/usr/bin/python3-config
echo "$src/build/$variant/gem5.opt sha256 $(sha256sum "build/$variant/gem5.opt" | cut -c1-16)"
