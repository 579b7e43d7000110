#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The gate, checked structurally (issue 33): outside the gate's own files, no code in core/, ui/ or app/ opens a
# file, walks a folder or compiles a regular expression. Inputs are opened through core/util/fileio.h, outputs
# written through core/util/outputfile.h, dump folders walked by dump::discoverDump, tensors read through
# tensor::TensorResolver (docs/reliability.md, "The gate, checked by the test suite").
#
# Usage: scan.sh SOURCE_DIR [ALLOWLIST]   (ALLOWLIST defaults to tests/gate/allowlist.txt)
# Exit 0 when every finding is in a gate file or on the allowlist and every allowlist entry still matches a
# finding; 1 otherwise, listing file:line, the kind and the code.
set -u
src=${1:?usage: scan.sh SOURCE_DIR [ALLOWLIST]}
allow=${2:-$src/tests/gate/allowlist.txt}
cd "$src" || exit 1

# The gate itself: the files that are the one way to do each thing.
gate_files='^(core/util/(fileio|outputfile|folderlist|ziparchive)\.(h|cpp)|core/graph/(sqlitedb|sqlitewriter)\.(h|cpp)|core/dump/dumplayout\.(h|cpp)|core/tensor/(resolver|tensorfile|npyreader|ptnative)\.(h|cpp))$'

# kind<TAB>extended regex. Member calls (x.open(), MappedFile::open) are not raw opens; a bare or global open is.
patterns=$(cat <<'PAT'
open	std::(basic_)?(i|o)?fstream([^A-Za-z0-9_]|$)
open	(^|[^A-Za-z0-9_:.>])(fopen|freopen|fdopen|creat|openat)[ ]*\(
open	(^|[^A-Za-z0-9_:.>])open[ ]*\([^)]*O_(RDONLY|WRONLY|RDWR)
open	(^|[^A-Za-z0-9_])(::|std::)(open|openat|creat|fopen|freopen)[ ]*\(
open	(^|[^A-Za-z0-9_])Q(Save)?File([^A-Za-z0-9_]|$)
open	(^|[^A-Za-z0-9_])sqlite3_open
open	(^|[^A-Za-z0-9_])QImageWriter([^A-Za-z0-9_]|$)
open	\.save\([ ]*[^&)][^,)]*,[ ]*"
walk	directory_iterator
walk	(^|[^A-Za-z0-9_:.>]|[^A-Za-z0-9_:]::)(opendir|fdopendir|scandir|nftw|ftw|glob)[ ]*\(
walk	(^|[^A-Za-z0-9_])QDirIterator([^A-Za-z0-9_]|$)
walk	entry(Info)?List[ ]*\(
regex	std::(basic_|w)?regex([^A-Za-z0-9_]|$)
regex	(^|[^A-Za-z0-9_])regcomp[ ]*\(
regex	(^|[^A-Za-z0-9_])QRegularExpression([^A-Za-z0-9_]|$)
regex	(^|[^A-Za-z0-9_])QRegExp([^A-Za-z0-9_]|$)
PAT
)
findings=$(mktemp)
trap 'rm -f "$findings"' EXIT
# One awk over every file: comment lines are skipped, code before a trailing // comment is kept.
find core ui app -type f \( -name '*.cpp' -o -name '*.h' -o -name '*.hpp' -o -name '*.cc' \) | LC_ALL=C sort \
    | grep -Ev "$gate_files" \
    | xargs -d '\n' -r awk -v patterns="$patterns" '
        BEGIN {
            n = split(patterns, lines, "\n")
            for (i = 1; i <= n; ++i) {
                split(lines[i], f, "\t")
                kind[i] = f[1]
                re[i] = f[2]
            }
        }
        {
            line = $0
            sub(/\/\/.*$/, "", line)
            if (line ~ /^[ \t]*(\*|\/\*)/)
                next
            for (i = 1; i <= n; ++i)
                if (line ~ re[i])
                    printf "%s\t%s\t%d\t%s\n", FILENAME, kind[i], FNR, $0
        }' \
    | LC_ALL=C sort -u -t$'\t' -k1,1 -k3,3n -k2,2 >"$findings"

# The allowlist: "path<whitespace>kind<whitespace>reason"; blank lines and # comments ignored.
status=0
declare -A allowed
while read -r path kind reason; do
    [[ -z $path || $path == \#* ]] && continue
    if [[ -z $kind || -z $reason ]]; then
        echo "allowlist: \"$path\" needs a kind (open, walk, regex) and a reason" >&2
        status=1
        continue
    fi
    allowed["$path $kind"]=0
done <"$allow"

while IFS=$'\t' read -r file kind line code; do
    if [[ -n ${allowed["$file $kind"]+set} ]]; then
        allowed["$file $kind"]=1
        continue
    fi
    echo "$file:$line: $kind outside the gate: $(sed 's/^[ \t]*//' <<<"$code")" >&2
    status=1
done <"$findings"

for key in "${!allowed[@]}"; do
    if [[ ${allowed[$key]} == 0 ]]; then
        echo "allowlist: \"$key\" matches nothing any more: remove the entry (the allowlist stays short)" >&2
        status=1
    fi
done
if [[ $status -ne 0 ]]; then
    echo "the gate check failed: route the code through core/util/fileio.h, core/util/outputfile.h," \
         "dump::discoverDump or tensor::TensorResolver, or justify it in $allow" >&2
else
    echo "the gate check passed: $(wc -l <"$findings") uses, all in the gate's files or on the allowlist"
fi
exit $status
