#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Issue 25's cross-path table: each damaged or hostile input (a row) through every path (a column), each cell
# with its one expected outcome (docs/reliability.md, "The cross-path table"). Issue 33 added the columns graph
# (probescope-cli graph on the pair), ginfo (probescope-cli info on a graph file: the .vis.db that graph writes,
# damaged the row's way), gshot (the GUI's scripted mode on that graph file) and py (the Python module's compare()).
#
# usage: crosspath.sh CLI FIXTURES WORKDIR ROW|all [GUI] [RUNUT] [PYTHON]
#   GUI    the probescope binary (scripted mode, offscreen), or "" when the UI is not built: those columns are skipped
#   RUNUT  ON when run-ut has its LibTorch plugin, else that column is skipped
#   PYTHON the interpreter that imports the probescope module (PYTHONPATH set by the caller), or "": py is skipped
# Issue 35 added the columns ccd (config_check -d), ccc (config_check -c of two packs), ckpt (config_check -c of two
# checkpoints), merge (merge_result), ovf (overflow_check, also spelled nan_analyze), d2db (data2db --format monitor)
# and anom (anomaly_analyse). ovf reads the row's dump pair (the bench step); the others read their own inputs (the
# msprobe26_workflow fixtures), damaged the row's way where the row means something for them (wdamage), else "-".
#
# Prints one line per row: "ROW  info:ok tree:ok c12:FAIL(...) ...", and exits 1 when a cell fails.
#
# crosspath-xfail.txt lists cells that fail on this tree only because another part of issue 33 is not merged yet
# (ROW COLUMN OWNER REASON): such a cell shows XFAIL(...) and does not fail the row; one that passes shows XPASS and
# fails the row, so the list is emptied as the parts arrive.
#
# Expected outcomes: 0 / 1 / 2 = that exit status; * = 0 or 1 (the path does not look at what is damaged, or
# only the bound matters: a ptdbg .npy holds the real shape, a 100 KB row name names no .npy file);
# same = the exit status and result CSVs of the row's twin input (bare NaN vs "nan"); - = not applicable.
# Every cell that runs is also checked for: exit < 128 and no hang (20 s), the damaged file named on exit 1,
# the usage error explained on exit 2, the value planted outside the dump (4242.25) never shown or written,
# every file already in the output folder kept byte for byte, and no temporary file left there.
set -u
cli=$1 fixtures=$2 work=$3 want=$4 gui=${5:-} runut=${6:-OFF} python=${7:-}
xfails=$(dirname "$0")/crosspath-xfail.txt
src_data=$(cd "$(dirname "$0")/../data" && pwd)
S=$fixtures/modelA_statistics_mix
T=$fixtures/modelA_tensor_mix
P=$fixtures/legacy_ptdbg/all_mode
mkdir -p "$work"
work=$(cd "$work" && pwd)
export QT_QPA_PLATFORM=offscreen
# A column whose program is not built is skipped, not failed: the GUI in dev-asan, run-ut without its plugin.
[ -n "$gui" ] && [ ! -x "$gui" ] && gui=""
if [ "$runut" = ON ]; then
    "$cli" run-ut -api_info "$work/no-such-dump.json" -o "$work/probe-$want" >/dev/null 2>"$work/probe-$want.err"
    grep -q "no-such-dump.json" "$work/probe-$want.err" || runut=OFF
fi
# The sentinel: a float32 .npy outside every dump, holding 4242.25 (an escaping name must never reach it).
SENTINEL=4242.25

if [ -n "$python" ] && ! "$python" -c 'import probescope' >/dev/null 2>&1; then python=""; fi

columns=(info tree c12 c26 ptdbg da job resume runut gui graph ginfo gshot py ccd ccc ckpt merge ovf d2db anom)
W=$fixtures/msprobe26_workflow

# ---- inputs ------------------------------------------------------------------------------------------------

# template KIND DEST: a fresh writable NPU/bench pair in DEST/{npu,bench}/step0/rank (KIND stat or tensor) and
# a ptdbg pair in DEST/pkl/{npu,bench}/rank0/{dump.pkl,dump/}.
template() {
    local kind=$1 dest=$2 from
    [ "$kind" = tensor ] && from=$T || from=$S
    rm -rf "$dest" && mkdir -p "$dest"
    for side in npu bench; do
        mkdir -p "$dest/$side/step0"
        cp -r "$from/$side/step0/rank" "$dest/$side/step0/"
        mkdir -p "$dest/pkl/$side"
        cp -r "$P/$side/ptdbg_dump_v6.0/step0/rank0" "$dest/pkl/$side/"
    done
    chmod -R u+w "$dest"
    mkdir -p "$dest/outside"
    # .npy v1.0: magic, header length 118 (10 + 118 = 128), the header padded to it, then two float32 4242.25.
    {
        printf '\x93NUMPY\x01\x00\x76\x00'
        printf "%-117s\n" "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }"
        printf '\x80\x91\x84\x45\x80\x91\x84\x45'
    } >"$dest/outside/evil.npy"
}

# edit FILE PERL-SUBSTITUTION: the first match only; fails the row when nothing changed.
edit() {
    local file=$1 expr=$2
    cp "$file" "$file.orig"
    EXPR=$expr perl -0777 -pe 'BEGIN { $e = $ENV{EXPR} } eval $e; die $@ if $@' "$file.orig" >"$file"
    if cmp -s "$file" "$file.orig"; then echo "edit changed nothing: $expr in $file" >&2; rm -f "$file.orig"; return 1; fi
    rm -f "$file.orig"
}

# deep N: N '[' then N ']'.
deep() { perl -e 'print "[" x $ARGV[0], "]" x $ARGV[0]' "$1"; }

# damage ROW DEST: applies the row's damage to a pair made by template. Sets NAME (what a message on exit 1 must
# contain), SIDE (npu or bench: the side info, tree and run-ut read) and PNAME (NAME for the ptdbg column).
damage() {
    local row=$1 d=$2
    local bj=$d/bench/step0/rank/dump.json nj=$d/npu/step0/rank/dump.json
    local bp=$d/pkl/bench/rank0/dump.pkl np=$d/pkl/npu/rank0/dump.pkl
    SIDE=bench NAME=bench/step0/rank/dump.json PNAME=bench/rank0/dump.pkl
    case $row in
    clean | options) ;;
    fulldisk) NAME='No space left on device' PNAME=$NAME ;;
    cut)
        local size; size=$(stat -c %s "$bj")
        head -c $((size / 2)) "$bj" >"$bj.x" && mv "$bj.x" "$bj"
        size=$(stat -c %s "$bp"); head -c $((size / 2)) "$bp" >"$bp.x" && mv "$bp.x" "$bp" ;;
    mistyped)
        edit "$bj" 's/"Max": [-0-9.eE]+/"Max": "abc"/' || return 1
        edit "$bp" 's/\[([-0-9.eE]+), ([-0-9.eE]+), ([-0-9.eE]+), ([-0-9.eE]+)\]\]/["abc", $2, $3, $4]]/' || return 1 ;;
    entry_x)
        edit "$bj" 's/("data": \{\s*)"/$1"Functional.gelu.99.forward": "x", "/' || return 1
        edit "$bp" 's/\n/\n"x"\n/' || return 1 ;;
    syntax)
        edit "$bj" 's/"Max": /"Max" /' || return 1
        edit "$bp" 's/\], \[/] [/' || return 1 ;;
    empty)
        echo '{"task": "statistics", "level": "mix", "framework": "pytorch", "dump_data_dir": null, "data": {}}' >"$bj"
        : >"$bp" ;;
    long_name)
        # A 100 KB API name on both sides (a regex over it overflowed the stack in the ptdbg profile).
        for f in "$bj" "$nj"; do
            edit "$f" 's/"Functional\.conv2d\.0\.forward"/"\"Functional.conv2d" . ("a" x 100000) . ".0.forward\""/e' || return 1
        done
        for f in "$bp" "$np"; do
            edit "$f" 's/"Functional\.conv2d\.0\.forward\.input\.0"/"\"Functional.conv2d" . ("a" x 100000) . ".0.forward.input.0\""/e' || return 1
        done ;;
    utf8)
        edit "$bj" 's/"Functional\./"Functional\xff./' || return 1
        edit "$bp" 's/"Functional\./"Functional\xff./' || return 1 ;;
    nan)
        # The twin (T/) holds "nan" where this one holds the bare token NaN: both must be judged alike.
        edit "$bj" 's/"Max": [-0-9.eE]+/"Max": NaN/' || return 1 ;;
    escape)
        # A tensor dump whose first data_name leaves the dump folder (on both sides, so the rows match).
        edit "$bj" 's/"data_name": "[^"]*"/"data_name": "..\/..\/..\/..\/outside\/evil.npy"/' || return 1
        edit "$nj" 's/"data_name": "[^"]*"/"data_name": "..\/..\/..\/..\/outside\/evil.npy"/' || return 1
        edit "$bp" 's/"Functional\.conv2d\.0\.forward\.input\.0"/"..\/..\/..\/..\/outside\/evil"/' || return 1
        edit "$np" 's/"Functional\.conv2d\.0\.forward\.input\.0"/"..\/..\/..\/..\/outside\/evil"/' || return 1
        NAME='outside/evil|data_name|escapes|outside' PNAME=$NAME ;;
    symlink_dir)
        # The NPU's tensor folder is a symlink to the bench's: the NPU would be compared with the bench's own data.
        rm -rf "$d/npu/step0/rank/dump_tensor_data" "$d/pkl/npu/rank0/dump"
        ln -s "$d/bench/step0/rank/dump_tensor_data" "$d/npu/step0/rank/dump_tensor_data"
        ln -s "$d/pkl/bench/rank0/dump" "$d/pkl/npu/rank0/dump"
        SIDE=npu NAME='dump_tensor_data' PNAME='dump' ;;
    duplicate)
        # A folder holding two dumps of the same (step, rank), the issue's "npu/ and bench/ given as the NPU".
        mkdir -p "$d/both"
        cp -r "$d/npu" "$d/bench" "$d/both/"
        NAME='both/(npu|bench)/step0/rank' PNAME=- ;;
    huge)
        # The same impossible shape on both sides: only a path that builds tensors from it may object.
        edit "$bj" 's/"shape": \[[0-9, ]*\]/"shape": [100000, 100000, 100000]/' || return 1
        edit "$nj" 's/"shape": \[[0-9, ]*\]/"shape": [100000, 100000, 100000]/' || return 1
        edit "$bp" 's/\[2, 1, 4, 4\]/[100000, 100000, 100000]/' || return 1
        edit "$np" 's/\[2, 1, 4, 4\]/[100000, 100000, 100000]/' || return 1
        NAME='runut.too-large|bench/step0/rank/dump.json' ;;
    deep_json)
        local nest; nest=$(deep 50000) # 100,000 bytes: an environment string holds at most 128 KiB
        NEST=$nest edit "$bj" 's/"input_args": \[/"input_args": $ENV{NEST}, "x": [/' || return 1
        NEST=$nest edit "$bp" 's/, \[\], /, $ENV{NEST}, /' || return 1 ;;
    deep_model)
        # 3,000 modules nested in one chain on both sides (dump.json and construct.json): linear cost, no crash.
        for f in "$bj" "$nj"; do
            perl -e 'my $n = $ARGV[0]; my @e; for my $i (0 .. $n - 1) { push @e, "\"Module.m$i.Block.forward.0\": {\"input_args\": [], \"input_kwargs\": {}, \"output\": [{\"type\": \"torch.Tensor\", \"dtype\": \"torch.float32\", \"shape\": [2], \"Max\": 1.0, \"Min\": 0.0, \"Mean\": 0.5, \"Norm\": 1.0, \"requires_grad\": false}]}" }
                     print "{\"task\": \"statistics\", \"level\": \"mix\", \"framework\": \"pytorch\", \"dump_data_dir\": null, \"data\": {", join(", ", @e), "}}\n"' 3000 >"$f"
            perl -e 'my $n = $ARGV[0]; my @e; for my $i (0 .. $n - 1) { push @e, "\"Module.m$i.Block.forward.0\": " . ($i ? "\"Module.m" . ($i - 1) . ".Block.forward.0\"" : "null") }
                     print "{", join(", ", @e), "}\n"' 3000 >"$(dirname "$f")/construct.json"
            echo '{}' >"$(dirname "$f")/stack.json"
        done ;;
    oddpath) # the whole pair is moved under a folder whose name is not UTF-8 (see cell_inputs); only the window,
        # which holds paths as text, refuses it, saying so
        NAME='not valid UTF-8' ;;
    *) echo "unknown row $row" >&2; return 1 ;;
    esac
}

# winputs DEST: the inputs of issue 35's columns in DEST/w (writable copies of the msprobe26_workflow fixtures).
winputs() {
    local w=$1/w
    rm -rf "$w" && mkdir -p "$w"
    cp "$W/config_check/static_gpu_vs_npu/inputs/bench/"* "$w/" 2>/dev/null
    cp "$W/config_check/dynamic_weights_dataset_random/inputs/bench.zip" "$W/config_check/dynamic_weights_dataset_random/inputs/cmp.zip" "$w/"
    cp -r "$W/ckpt_compare/tp2/inputs/ckptA" "$W/ckpt_compare/tp2/inputs/ckptB" "$w/"
    cp -r "$W/merge_result/summary_3ranks/inputs/compare_out" "$w/"
    cp "$W/merge_result/summary_3ranks/inputs/merge_selected.yaml" "$w/merge.yaml"
    cp -r "$W/monitor/v1_norm_only_2r/inputs/monitor_output" "$w/"
    cp -r "$W/monitor/anomaly_processor_handmade/inputs/anomaly_detected" "$w/"
    chmod -R u+w "$w"
}

# zedit ZIP ENTRY PYTHON-EXPR: replaces ENTRY of ZIP with the expression's bytes (`b` = its bytes now).
zedit() {
    python3 -c 'import sys, zipfile
z, name, expr = sys.argv[1:4]
src = zipfile.ZipFile(z)
items = [(i, src.read(i)) for i in src.infolist()]
src.close()
with zipfile.ZipFile(z, "w", zipfile.ZIP_DEFLATED) as out:
    for info, data in items:
        if info.filename == name:
            b = data
            data = eval(expr)
        out.writestr(info, data)' "$1" "$2" "$3"
}

# wdamage ROW COLUMN DEST: the row's damage to the column's main input (the pack, a checkpoint shard, a compare
# workbook, a monitor CSV, an anomaly.json; the launch script and YAML of ccd). Sets NAME.
wdamage() {
    local row=$1 col=$2 w=$3/w f
    SIDE=bench PNAME=-
    case $col in
    ccd) f=$w/train.sh ;;
    ccc) f=$w/bench.zip ;;
    ckpt) f=$w/ckptA/iter_0000100/mp_rank_00/model_optim_rng.pt ;;
    merge) f=$(ls "$w"/compare_out/compare_result_rank1_*.xlsx) ;;
    d2db) f=$(ls -d "$w"/monitor_output/*rank0*)/actv_0-0.csv ;;
    anom) f=$w/anomaly_detected/rank1/anomaly.json ;;
    esac
    NAME=${f#"$w"/}
    case $row in
    clean | options | oddpath) ;;
    fulldisk) NAME='No space left on device' ;;
    cut) local size; size=$(stat -c %s "$f"); head -c $((size / 2)) "$f" >"$f.x" && mv "$f.x" "$f" ;;
    empty) : >"$f" ;;
    syntax)
        case $col in
        ccc) zedit "$f" weights/step0/rank0/weight.json 'b.replace(b": ", b" ", 1)'; NAME='weight.json' ;;
        merge) printf 'compare_index: [Max diff\n' >"$w/merge.yaml"; NAME='merge.yaml' ;;
        anom) edit "$f" 's/": /" /' || return 1 ;;
        d2db) edit "$f" 's/\n/\n"unclosed,/' || return 1 ;;
        ckpt) printf 'PK\x03\x04garbage' | dd of="$f" bs=1 conv=notrunc status=none ;;
        esac ;;
    mistyped)
        case $col in
        ccc) zedit "$f" weights/step0/rank0/weight.json 'b.replace(b"\"max\": ", b"\"max\": \"abc\", \"x\": ", 1)'; NAME='weight.json' ;;
        anom) edit "$f" 's/"step": [0-9]+/"step": "abc"/' || return 1 ;;
        d2db) edit "$f" 's/\n([^,\n]*),([^,\n]*),/\n$1,abc,/' || return 1 ;;
        esac ;;
    utf8)
        case $col in
        ccc) zedit "$f" weights/step0/rank0/weight.json 'b.replace(b"\"embedding", b"\"\xffembedding", 1)'; NAME='weight.json' ;;
        anom | d2db) edit "$f" 's/([A-Za-z])/$1\xff/' || return 1 ;;
        ccd) edit "$f" 's/--lr/--l\xffr/' || return 1 ;;
        esac ;;
    deep_json)
        local nest; nest=$(deep 50000)
        case $col in
        ccc) NEST=$nest zedit "$f" dataset/step0/rank0/dataset.json 'b.replace(b"\"kwargs\": {}", b"\"kwargs\": " + __import__("os").environ["NEST"].replace("[", "{\"a\": ").replace("]", "}").encode(), 1)'
            NAME='dataset.json' ;;
        anom) NEST=$nest edit "$f" 's/"rank": 1,/"rank": 1, "x": $ENV{NEST},/' || return 1 ;;
        esac ;;
    escape) # a path out of OUT or code execution
        case $col in
        ccc) cp "$src_data/configcheck/evil_dotdot.zip" "$f"; NAME='bench.zip' ;;
        ckpt) rm -rf "$w/ckptA"; cp -r "$src_data/ckpt/hostile/reduce_os_system" "$w/ckptA"; NAME='ckptA/.*model_optim_rng.pt' ;;
        esac ;;
    huge) # a zip bomb, an absurd storage
        case $col in
        ccc) cp "$src_data/configcheck/bomb.zip" "$f"; NAME='bench.zip' ;;
        ckpt) rm -rf "$w/ckptA"; cp -r "$src_data/ckpt/hostile/absurd_storage" "$w/ckptA"; NAME='ckptA/.*model_optim_rng.pt' ;;
        esac ;;
    symlink_dir)
        case $col in
        ccc) cp "$src_data/configcheck/evil_symlink.zip" "$f"; NAME='bench.zip' ;;
        esac ;;
    esac
}

# The expected outcome of each row, in the order of `columns`. Decisions: -da analyses the statistics of dump.json
# and reads no tensor file, so an escaping data name or a linked tensor folder changes nothing there (exit 0, and
# nothing outside is read); the window holds paths as Qt text and refuses a path that is not UTF-8 with a message
# (exit 1), where the CLI takes any bytes.
#
# Issue 33's columns: graph answers as the compare pipeline it runs on (it refuses what compare refuses). ginfo and
# gshot read a graph file: `graph` writes it from the clean pair (or, for clean, long_name, nan, deep_model,
# oddpath, fulldisk and options, from the row's pair), then the row damages the file the row's way: cut = cut in
# half, syntax = not a SQLite header, empty = no nodes (a graph file without nodes is no clean answer), mistyped =
# a text micro_step_id, entry_x = a node whose sub_nodes are not a list, utf8 = a node name with a 0xFF byte,
# deep_json = a node's input_data nested 100,000 levels, huge = a node with rowid 2^63-1; these must end within 20 s
# with exit 0 or 1 where no rule says which (*). The GUI writes its PNG through the output writer, so a full disk
# is exit 1 there. py is the Python module's compare() on the two dump.json files (an exception is exit 1; there
# are no options to misuse, and a path that is not UTF-8 reaches the CLI through Python's text, *).
#
# Issue 35's columns (after py): ccd ccc ckpt merge ovf d2db anom. ccd reads launch scripts as msprobe does, which
# skips what it cannot parse: a damaged script gives a pack with fewer hyperparameters (*). ovf answers on the bench
# step of the row's pair as info does on what it reads (statistics only: escape and symlink_dir read no tensor).
# d2db skips a monitor CSV row that msprobe skips (a step that is no number, a missing column) with a warning naming
# the file and line, exit 0, as msprobe does; a file cut inside a quoted field, which pandas refuses whole, is exit 1.
#                 info tree c12 c26 ptdbg da job resume runut gui graph ginfo gshot py ccd ccc ckpt merge ovf d2db anom
declare -A expect=(
    [clean]="0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0"
    [cut]="1 1 1 1 1 1 1 1 1 1 1 1 1 1 * 1 1 1 1 1 1"
    [mistyped]="1 1 1 1 1 1 1 1 1 1 1 * * 1 - 1 - - 1 0 1"
    [entry_x]="1 1 1 1 1 1 1 1 1 1 1 * * 1 - - - - 1 - -"
    [utf8]="1 1 1 1 1 1 1 1 1 1 1 * * 1 * 1 - - 1 0 1"
    [syntax]="1 1 1 1 1 1 1 1 1 1 1 1 1 1 - 1 1 1 1 0 1"
    [empty]="0 0 1 1 1 1 1 1 * 1 1 1 1 1 * 1 1 1 * * *"
    [long_name]="0 0 0 0 * 0 0 0 0 0 0 0 0 0 - - - - 0 - -"
    [nan]="0 0 same same - same same same - 0 0 0 0 same - - - - 0 - -"
    [escape]="1 0 1 1 1 0 1 1 1 1 1 - - 1 - 1 1 - 0 - -"
    [symlink_dir]="* 0 1 1 1 0 1 1 * 1 1 - - 1 - 1 - - 0 - -"
    [duplicate]="1 1 1 1 - 1 1 1 - 1 1 - - - - - - - 1 - -"
    [huge]="0 0 0 0 * 0 0 0 1 0 0 * * 0 - 1 1 - 0 - -"
    [deep_json]="1 1 1 1 1 1 1 1 1 1 1 * * 1 - 1 - - 1 - 1"
    [deep_model]="0 0 0 0 - 0 0 0 0 0 0 0 0 0 - - - - 0 - -"
    [oddpath]="0 0 0 0 0 0 0 0 0 1 0 0 1 * 0 0 0 0 0 0 0"
    [fulldisk]="0 0 1 1 1 1 1 1 1 1 1 0 1 1 1 1 1 1 * 1 1"
    [options]="2 2 2 2 2 2 2 2 2 - 2 2 - - 2 2 2 2 2 2 2"
)
rows=(clean cut mistyped entry_x utf8 syntax empty long_name nan escape symlink_dir duplicate huge deep_json deep_model oddpath fulldisk options)

# ---- one cell ------------------------------------------------------------------------------------------------

# command COLUMN DIR OUT [resume]: sets CMD (an array) for the column on the pair in DIR.
command() {
    local col=$1 d=$2 out=$3 npu=$2/npu bench=$2/bench side=$2/$SIDE/step0/rank
    [ "$ROW" = duplicate ] && npu=$d/both
    local bad=()
    case $col in
    info) [ "$ROW" = options ] && bad=(--xlsx); [ "$ROW" = duplicate ] && side=$d/both
        CMD=("$cli" info "$side" "${bad[@]}") ;;
    tree) [ "$ROW" = options ] && bad=(-o "$out"); [ "$ROW" = duplicate ] && side=$d/both
        CMD=("$cli" tree "$side" "${bad[@]}") ;;
    c12 | c26)
        [ "$ROW" = options ] && bad=(--exec-order)
        [ "$col" = c26 ] && bad+=(--profile msprobe-26)
        local n=$npu/step0 b=$bench/step0
        [ "$ROW" = duplicate ] && n=$npu b=$bench
        CMD=("$cli" compare --npu "$n" --bench "$b" -o "$out" -j 1 "${bad[@]}") ;;
    ptdbg) [ "$ROW" = options ] && bad=(--exec-order)
        CMD=("$cli" compare --profile ptdbg --npu "$d/pkl/npu/rank0" --bench "$d/pkl/bench/rank0" -o "$out" "${bad[@]}") ;;
    da) [ "$ROW" = options ] && bad=(--xlsx)
        local n=$npu/step0
        [ "$ROW" = duplicate ] && n=$npu
        CMD=("$cli" compare --profile msprobe-26 -da --npu "$n" --bench "$bench/step0" -o "$out" "${bad[@]}") ;;
    job | resume)
        [ "$ROW" = options ] && bad=(--verify)
        [ "$col" = resume ] && bad+=(--resume)
        CMD=("$cli" compare --npu "$npu" --bench "$bench" -o "$out" -j 1 "${bad[@]}") ;;
    runut) [ "$ROW" = options ] && bad=(--xlsx)
        CMD=("$cli" run-ut -api_info "$side/dump.json" -o "$out" "${bad[@]}") ;;
    gui) CMD=("$gui" --screenshot "$out/shot.png" "$npu" "$bench") ;;
    graph) [ "$ROW" = options ] && bad=(--xlsx)
        local n=$npu/step0 b=$bench/step0
        [ "$ROW" = duplicate ] && n=$npu b=$bench
        CMD=("$cli" graph -tp "$n" -gp "$b" -o "$out" "${bad[@]}") ;;
    ginfo) [ "$ROW" = options ] && bad=(--xlsx)
        CMD=("$cli" info "$GRAPHDB" "${bad[@]}") ;;
    gshot) CMD=("$gui" --screenshot "$out/shot.png" "$GRAPHDB") ;;
    ccd) [ "$ROW" = options ] && bad=(--xlsx)
        CMD=("$cli" config_check -d "$d/w/train.sh" -o "$out/pack.zip" "${bad[@]}") ;;
    ccc) [ "$ROW" = options ] && bad=(--xlsx)
        CMD=("$cli" config_check -c "$d/w/bench.zip" "$d/w/cmp.zip" -o "$out/cc" "${bad[@]}") ;;
    ckpt) [ "$ROW" = options ] && bad=(--xlsx)
        CMD=("$cli" config_check -c "$d/w/ckptA" "$d/w/ckptB" -o "$out/ckpt.json" "${bad[@]}") ;;
    merge) [ "$ROW" = options ] && bad=(--xlsx)
        CMD=("$cli" merge_result -i "$d/w/compare_out" -o "$out/merge" -config "$d/w/merge.yaml" "${bad[@]}") ;;
    ovf) [ "$ROW" = options ] && bad=(--xlsx)
        local b=$bench/step0
        [ "$ROW" = duplicate ] && b=$d/both
        CMD=("$cli" overflow_check -i "$b" -o "$out/ovf" "${bad[@]}") ;;
    d2db) [ "$ROW" = options ] && bad=(--xlsx)
        CMD=("$cli" data2db --data "$d/w/monitor_output" --db "$out/db" --format monitor "${bad[@]}") ;;
    anom) [ "$ROW" = options ] && bad=(--xlsx)
        CMD=("$cli" anomaly_analyse -d "$d/w/anomaly_detected" -o "$out/anom" -k 5 "${bad[@]}") ;;
    py) CMD=("$python" -c 'import sys
from probescope import compare
compare({"npu_json_path": sys.argv[1], "bench_json_path": sys.argv[2]}, sys.argv[3])' \
            "$npu/step0/rank/dump.json" "$bench/step0/rank/dump.json" "$out") ;;
    esac
}

# graphfile DIR: writes the graph file of the pair in DIR with `graph` (into DIR/graphfile) and sets GRAPHDB.
graphfile() {
    local d=$1
    rm -rf "$d/graphfile" && mkdir -p "$d/graphfile"
    "$cli" graph -tp "$d/npu/step0" -gp "$d/bench/step0" -o "$d/graphfile" >"$d/graphfile.log" 2>&1 || return 1
    GRAPHDB=$(find "$d/graphfile" -name '*.vis.db' | head -n 1)
    [ -n "$GRAPHDB" ]
}

# gdamage ROW DB: damages a graph file the row's way (python3's sqlite3 for the edits inside the db).
gdamage() {
    local row=$1 db=$2 sql=""
    case $row in
    cut) local size; size=$(stat -c %s "$db"); head -c $((size / 2)) "$db" >"$db.x" && mv "$db.x" "$db"; return ;;
    syntax) printf 'not a database!!' | dd of="$db" bs=1 conv=notrunc status=none; return ;;
    empty) sql="DELETE FROM tb_nodes" ;;
    mistyped) sql="UPDATE tb_nodes SET micro_step_id = 'abc' WHERE rowid = (SELECT min(rowid) FROM tb_nodes)" ;;
    entry_x) sql="UPDATE tb_nodes SET sub_nodes = '\"x\"' WHERE rowid = (SELECT min(rowid) FROM tb_nodes)" ;;
    utf8) sql="UPDATE tb_nodes SET node_name = CAST(X'46756e6374696f6e616cff2e78' AS TEXT) WHERE rowid = (SELECT max(rowid) FROM tb_nodes)" ;;
    huge) sql="UPDATE tb_nodes SET rowid = 9223372036854775807 WHERE rowid = (SELECT max(rowid) FROM tb_nodes)" ;;
    deep_json) sql="UPDATE tb_nodes SET input_data = '$(deep 50000)' WHERE rowid = (SELECT max(rowid) FROM tb_nodes)" ;;
    *) return 0 ;;
    esac
    SQL=$sql python3 -c 'import os, sqlite3, sys
c = sqlite3.connect(sys.argv[1]); c.execute(os.environ["SQL"]); c.commit(); c.close()' "$db"
}

# Files in a folder with their checksums, to prove that none was replaced.
# A user's files of a folder. Resume markers of earlier versions (.probescope/pair_*) were ProbeScope's own state,
# rewritten by design (the journals that replace them, .probescope/journal/, are only ever added);
# outputs that a pair redone by --resume superseded are kept in .probescope/superseded/ and count as where they were.
inventory() {
    (cd "$1" 2>/dev/null && find . -type f ! -path '*/.probescope/pair_*' -print0 | xargs -0r md5sum \
        | sed 's#/\.probescope/superseded/#/#' | sort)
}

# result CSVs of a folder, names left out (they carry timestamps).
# The planted compare_result_20260101000000.csv is a user's file, not a result.
results() {
    find "$1" -name .probescope -prune -o -name 'compare_result*.csv' ! -name 'compare_result_20260101000000.csv' \
        -print0 2>/dev/null | sort -z | xargs -0r cat | md5sum
}

CELL=""
# run_cell COLUMN EXPECTED: runs one cell of row $ROW and sets CELL to ok, FAIL(...), - or skip.
run_cell() {
    local col=$1 want=$2
    if [ "$want" = - ]; then CELL=-; return; fi
    if { [ "$col" = gui ] || [ "$col" = gshot ]; } && [ -z "$gui" ]; then CELL=skip; return; fi
    if [ "$col" = py ] && [ -z "$python" ]; then CELL=skip; return; fi
    if [ "$col" = runut ] && [ "$runut" != ON ]; then CELL=skip; return; fi
    local kind=stat
    case $ROW in escape | symlink_dir) kind=tensor ;; esac
    local base=$work/$ROW/$col
    local d=$base/in out=$base/out
    rm -rf "$base" && mkdir -p "$base"
    template $kind "$d" || { CELL="FAIL(template)"; return; }
    mkdir -p "$out"
    # Output files that were there before: a run may add files, never change or remove these.
    echo "PLANTED by crosspath.sh" >"$out/job_summary.csv"
    echo '{"planted": true}' >"$out/job_summary.json"
    echo "PLANTED" >"$out/compare_result_20260101000000.csv"
    local env=()
    if [ "$col" = resume ]; then
        # The resume column: a whole job on the clean pair first, then the damage, then --resume, which must
        # redo what changed and answer as a fresh run does.
        local first=("$cli" compare --npu "$d/npu" --bench "$d/bench" -o "$out" -j 1)
        timeout 20 "${first[@]}" >"$base/first.out" 2>&1
    fi
    local gfromrow=0
    case $ROW in clean | long_name | nan | deep_model | oddpath | fulldisk | options) gfromrow=1 ;; esac
    if { [ "$col" = ginfo ] || [ "$col" = gshot ]; } && [ $gfromrow = 0 ]; then
        graphfile "$d" || { CELL="FAIL(graph of the clean pair: $(tail -n 2 "$d/graphfile.log" | tr '\n' ' '))"; return; }
    fi
    local wcol=0
    case $col in ccd | ccc | ckpt | merge | d2db | anom) wcol=1 ;; esac
    if [ $wcol = 1 ]; then
        winputs "$d" || { CELL="FAIL(inputs)"; return; }
        wdamage "$ROW" "$col" "$d" || { CELL="FAIL(damage)"; return; }
        [ "$ROW" = oddpath ] && NAME='not valid UTF-8'
    else
        damage "$ROW" "$d" || { CELL="FAIL(damage)"; return; }
    fi
    if [ "$ROW" = oddpath ]; then
        local odd=$base/$'odd\xff dir'
        mv "$d" "$odd" && d=$odd
    fi
    if [ "$col" = ginfo ] || [ "$col" = gshot ]; then
        if [ $gfromrow = 1 ]; then
            graphfile "$d" || { CELL="FAIL(graph of the row's pair: $(tail -n 2 "$d/graphfile.log" | tr '\n' ' '))"; return; }
        else
            gdamage "$ROW" "$GRAPHDB" || { CELL="FAIL(graph file damage)"; return; }
        fi
        NAME='\.vis\.db'
        [ "$ROW" = fulldisk ] && NAME='No space left on device'
        [ "$ROW" = oddpath ] && NAME='not valid UTF-8'
    fi
    [ "$ROW" = fulldisk ] && env=(PROBESCOPE_TEST_ENOSPC=write:all)
    [ "$col" = ptdbg ] && NAME=$PNAME
    command "$col" "$d" "$out"
    local before; before=$(inventory "$out")
    local start=$SECONDS
    env "${env[@]}" timeout 20 "${CMD[@]}" >"$base/stdout" 2>"$base/stderr"
    local rc=$?
    local took=$((SECONDS - start))
    local problems=()
    if [ $rc = 124 ]; then problems+=("hang>20s")
    elif [ $rc -ge 128 ]; then problems+=("crash rc=$rc")
    else
        case $want in
        same)
            # The twin: the same pair with "nan" for NaN.
            local twin=$base/twin
            template stat "$twin/in"
            mkdir -p "$twin/out"
            edit "$twin/in/bench/step0/rank/dump.json" 's/"Max": [-0-9.eE]+/"Max": "nan"/'
            local saveOut=$out
            command "$col" "$twin/in" "$twin/out"
            timeout 20 "${CMD[@]}" >"$twin/stdout" 2>"$twin/stderr"
            local trc=$?
            [ $rc = $trc ] || problems+=("exit $rc, \"nan\" twin $trc")
            [ "$(results "$saveOut")" = "$(results "$twin/out")" ] || problems+=("results differ from the \"nan\" twin")
            ;;
        '*') [ $rc = 0 ] || [ $rc = 1 ] || problems+=("exit $rc, expected 0 or 1") ;;
        *) [ $rc = "$want" ] || problems+=("exit $rc, expected $want") ;;
        esac
        if [ $rc = 1 ] && [ "$want" = 1 ] && [ "$NAME" != - ]; then
            grep -qaE -- "$NAME" "$base/stdout" "$base/stderr" || problems+=("no message names /$NAME/")
        fi
        if [ $rc = 2 ] && [ "$want" = 2 ]; then
            grep -qaE -- "does not apply|applies to|unknown|takes no options" "$base/stderr" || problems+=("usage error without a reason")
        fi
    fi
    if grep -rqa -- "$SENTINEL" "$base/stdout" "$base/stderr" "$out" 2>/dev/null; then
        problems+=("read outside the dump ($SENTINEL shown)")
    fi
    local after; after=$(inventory "$out")
    local missing; missing=$(comm -23 <(echo "$before") <(echo "$after"))
    [ -z "$missing" ] || problems+=("replaced or removed: $(echo "$missing" | awk '{print $2}' | tr '\n' ' ')")
    if find "$out" -name '.*.tmp*' -o -name '*.tmp' 2>/dev/null | grep -q .; then problems+=("temporary file left"); fi
    local xfail=""
    [ -f "$xfails" ] && xfail=$(awk -v r="$ROW" -v c="$col" '$1 == r && $2 == c { $1 = ""; $2 = ""; print; exit }' "$xfails")
    if [ ${#problems[@]} = 0 ]; then
        CELL="ok"
        [ -n "$xfail" ] && CELL="XPASS(listed in crosspath-xfail.txt as failing:$xfail; remove the line)"
        rm -rf "$base" # keep only what failed
    else
        local IFS=';'
        CELL="FAIL(${problems[*]}; ${took}s)"
        [ -n "$xfail" ] && CELL="XFAIL(${problems[*]}; ${took}s; expected until merged:$xfail)"
        echo "  $ROW/$col: ${CMD[*]}" >"$base/command.txt"
    fi
}

run_row() {
    ROW=$1
    local wants
    read -r -a wants <<<"${expect[$ROW]}" # no glob: "*" is an outcome here
    local line="$ROW" failed=0 i
    for i in "${!columns[@]}"; do
        # CROSSPATH_COLUMNS="graph py" runs only those columns (by hand; ctest runs them all).
        if [ -n "${CROSSPATH_COLUMNS:-}" ] && [[ " $CROSSPATH_COLUMNS " != *" ${columns[$i]} "* ]]; then continue; fi
        run_cell "${columns[$i]}" "${wants[$i]}"
        line+="  ${columns[$i]}:$CELL"
        case $CELL in FAIL* | XPASS*) failed=1 ;; esac
    done
    echo "$line"
    return $failed
}

status=0
if [ "$want" = all ]; then
    for r in "${rows[@]}"; do run_row "$r" || status=1; done
elif [ -n "${expect[$want]:-}" ]; then
    run_row "$want" || status=1
else
    echo "unknown row $want (rows: ${rows[*]})" >&2
    exit 2
fi
exit $status
