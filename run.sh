#!/usr/bin/env bash
# Switchyard's one entry point: set up, build, test, benchmark, report.
set -euo pipefail
# The suite's total is the run's (quick 6 minutes, full 75) less what setup and build took
# (suite.py --started-at); a locale may write the decimal point as a comma.
STARTED=${EPOCHREALTIME:-$(date +%s.%N)}
STARTED=${STARTED/,/.}
ROOT=$(cd "$(dirname "$0")" && pwd)
cd "$ROOT"

PY=/usr/bin/python3 # Debian's interpreter: the one with matplotlib and numpy
# The Python packages' one search path (CMakeLists.txt sets the same for the tests): harness/
# (lib, experiments, gate, tools, the suite) and plots/.
export PYTHONPATH="$ROOT/harness:$ROOT/plots"
JOBS=$(nproc 2>/dev/null || echo 2)
# Tests at once. The release suite waits more than it computes (clients that stay idle or read
# slowly, timeouts, timers on real deadlines): at twice the CPUs a 2-core machine still idled
# for a third of its middle stretch, at three times it did not (340 s -> 313 s). The sanitizer
# suite (ASan's start and LeakSanitizer's exit scan in every process) and the aarch64 one
# (qemu-user) compute: three times the CPUs only added contention there (193 s -> 204 s,
# 40 s -> 45 s). results/notes/harness.md, 2026-12-05.
WAITING_TEST_JOBS=$((3 * JOBS))
COMPUTING_TEST_JOBS=$((2 * JOBS))
PACKAGES=(cmake gcc g++ make pkg-config libboost-context-dev libevent-dev libbenchmark-dev
    libbenchmark-tools liburing-dev valgrind linux-perf python3 python3-matplotlib python3-numpy
    python3-scipy chromium gcc-aarch64-linux-gnu g++-aarch64-linux-gnu libc6-dev-arm64-cross
    qemu-user libuv1-dev libev-dev libboost-coroutine-dev libboost-fiber-dev libpth-dev rt-tests
    openssh-server openssh-client pyflakes3 clang-format)
# For `test` only: clang 19, the one compiler here with preserve_none, so the one build with the
# cc-pnone switch backend (switch/README.md); `test` runs that build's switch tests.
TEST_PACKAGES=(clang-19)
# arm64 libraries for the aarch64 cross build (fcontext, switch-bench), installed the multiarch
# way (dpkg --add-architecture arm64). Optional: without them those two are not built there.
ARM64_PACKAGES=(libboost-context-dev:arm64 libbenchmark-dev:arm64)
AARCH64_TOOLCHAIN=cmake/aarch64-linux-gnu.cmake

say() { printf '[run.sh] %s\n' "$*"; }
die() { printf 'run.sh: %s\n' "$*" >&2; exit 1; }

# The suite's steps, one a line, from the experiment registry (harness/experiments/).
suite_steps() {
    "$PY" "$ROOT/harness/suite.py" --list
}

usage() {
    local steps
    steps=$(suite_steps | paste -sd, - | sed 's/,/, /g' | fold -s -w 52 | sed -e 's/ *$//' -e '2,$s/^/                             /')
    cat <<USAGE
usage: ./run.sh [subcommand] [options]

subcommands:
  (none)       set up, build, then the quick suite (a few minutes): switch and scheduler
               benchmarks, instruction counts, engine comparison, a reduced server sweep
               (1 to 10000 connections), the max-connections and 1-vs-2-thread runs, charts,
               CSV files and REPORT.md (a verdict on every claim)
  quick        the same as no subcommand
  full         set up, build, every experiment at full size (about 70 minutes): sweep 1..10000
               connections, all fiber counts, 5 engine rounds; charts and REPORT.md
  setup        install the missing Debian packages (idempotent)
  build        configure and build into build/ (Release, -O2, warnings as errors)
  test         set up, lint, build, run the verification suite: release build, ASan+UBSan
               build (each test matrix's covering part), the switch tests under valgrind
               memcheck, the aarch64 cross build's switch and scheduler tests under
               qemu-user, and a clang-19 build's switch tests (its cc-pnone backend)
  lint         pyflakes over every Python file, clang-format's check over every C/C++ file
               (part of test)
  regress      build, then gate switch cost: instruction counts, switches per hop and system
               calls per switch against results/baseline/counts.json (every machine), CPU
               times against results/baseline/timing/<cpu>.json (only this CPU model's) and
               against the base commit's build, timed in alternating processes (any machine;
               base: the merge base with main on a branch, else HEAD~1; built in build-base/)
  report       regenerate charts, CSV files and REPORT.md of a run folder: \`report DIR\`
  compare      two run folders side by side: \`compare A B\` (e.g. results/reference and a
               folder under results/runs/) writes results/compare/<A>-vs-<B>/COMPARE.md
               with every claim's figures, B/A, the noise reading and verdict changes
  bands        record this machine's run-to-run noise for fresh clones: every figure of the
               finished runs under results/runs/ (at least 3 per CPU model and preset, the
               20 most recent) into results/baseline/bands/<cpu model>-<preset>.json, which
               compare adds to the runs it finds (\`bands [--runs-root DIR] [--out DIR]\`)
  history      switch cost across run folders, per machine, in commit order, with intervals
               and the moves beyond noise: \`history [FIGURE ...] [--machine M] [DIR ...]\`
               (default: every run under results/runs/; every switch row, the IO path's
               counts, the claims' deciding figures and the peer ratios) writes
               results/history/HISTORY.md, history.csv and a chart per machine and figure
  slides       classroom slides of a run folder: \`slides DIR [--runs ROOT]\` draws one 16:9
               PNG in large type per chart that carries a claim into DIR/slides/, and writes
               ROOT/index.html (default results/runs/): every run's verdicts, one column each
  help         this text

options:
    quick|full --reference   write into results/reference/ (replacing it) instead of a new
                             folder results/runs/<host>/<UTC date>-<sha>/
    quick|full --only STEPS  run only these steps, a comma list of
                             $steps
                             (the experiments of harness/experiments/, then the report;
                             an empty list or name, or a name twice, is refused)
    quick|full --run-dir DIR write into DIR (created if missing)
    quick|full --load-host [USER@]HOST[:PATH] --bind ADDR
                             run the echo-load of sweep, engines, fiberio, peers, timers
                             and maxconns on HOST over ssh (repeatable: the
                             connections are shared out; README.md, "Load from other
                             machines"); the servers listen on ADDR, this machine's address
                             the hosts reach
    regress --update         record counts.json and this CPU model's timing baseline
                             (refuses a tree with uncommitted changes; no paired timing)
    regress --base REF       pair the timings with commit REF's build instead
    regress --no-base        no paired timing
    compare --out DIR        write the comparison into DIR
    compare --runs-root DIR  learn each figure's run-to-run band from the finished runs under
                             DIR (default results/runs; same CPU model and preset, A and B
                             left out, at least 3, else the 10% floor alone)
    compare --bands-dir DIR  the runs recorded per CPU model and preset (default
                             results/baseline/bands; ./run.sh bands writes them)
    compare --fail-on-verdict-change   exit 1 when a verdict differs between A and B

quick and full: one measuring run per machine at a time (a lock, /tmp/switchyard-suite.lock
or \$SWITCHYARD_SUITE_LOCK, taken before setup and build); SIGTERM, SIGINT or SIGHUP stops every
process of the run and leaves suite.json with status "interrupted" beside the steps that
finished. Exit status: 0 every step ok (or left out by the preset), 1 a step failed or the
run folder could not be written (suite.json says which), 2 usage, 3 another run holds the
lock (its pid named), 128 + N stopped by signal N.
USAGE
}

# A name without ":arch" means the native architecture's package (or an "all" one): with
# arm64 added as a foreign architecture, dpkg-query lists a package once per architecture.
missing_packages() {
    local p st native
    native=$(dpkg --print-architecture)
    for p in "$@"; do
        st=$(dpkg-query -W -f='${Status} ${Architecture}\n' "$p" 2>/dev/null || true)
        if [[ $p == *:* ]]; then
            grep -q "^install ok installed " <<<"$st" || printf '%s\n' "$p"
        else
            grep -Eq "^install ok installed ($native|all)\$" <<<"$st" || printf '%s\n' "$p"
        fi
    done
}

# installable WHAT PACKAGE...: sets INSTALLABLE to the packages missing here and returns 0
# when there are some and this is root; returns 1 otherwise, having named them under WHAT
# when they are missing but cannot be installed (not root).
installable() {
    local what=$1
    shift
    mapfile -t INSTALLABLE < <(missing_packages "$@")
    ((${#INSTALLABLE[@]} > 0)) || return 1
    if [[ $(id -u) -ne 0 ]]; then
        say "setup: $what, not installed (not root): ${INSTALLABLE[*]}"
        return 1
    fi
}

# The arm64 libraries: tried once per setup when missing; a failure only costs the aarch64
# build its fcontext backend and switch-bench, which its configure step then reports.
setup_arm64() {
    installable optional "${ARM64_PACKAGES[@]}" || return 0
    local missing=("${INSTALLABLE[@]}")
    say "setup: optional arm64 packages: ${missing[*]}"
    if ! dpkg --print-foreign-architectures | grep -qx arm64; then
        say "setup: dpkg --add-architecture arm64"
        dpkg --add-architecture arm64
    fi
    if apt-get update -q >/dev/null 2>&1 &&
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null 2>&1; then
        say "setup: arm64 packages installed"
    else
        say "setup: arm64 packages could not be installed; the aarch64 build goes without them"
    fi
}

cmd_setup() {
    local missing
    mapfile -t missing < <(missing_packages "${PACKAGES[@]}")
    if ((${#missing[@]} == 0)); then
        say "setup: all ${#PACKAGES[@]} Debian packages present"
        setup_arm64
        return 0
    fi
    say "setup: missing packages: ${missing[*]}"
    if [[ $(id -u) -ne 0 ]]; then
        echo "run.sh: not root; install them with:" >&2
        echo "  sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
        exit 2
    fi
    say "setup: apt-get update"
    apt-get update -q >/dev/null
    say "setup: apt-get install -y ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null
    setup_arm64
    say "setup: done"
}

# configure_build DIR [cmake options...] [-- TARGET...]: every target, or the ones named.
configure_build() {
    local dir=$1 options=() targets=()
    shift
    while (($#)) && [[ $1 != -- ]]; do options+=("$1"); shift; done
    (($#)) && { shift; targets=(--target "$@"); }
    local what=${options[*]}
    ((${#targets[@]})) && what="${what:+$what; }${targets[*]:1}"
    say "build: $dir ($what)"
    cmake -S "$ROOT" -B "$ROOT/$dir" -DCMAKE_BUILD_TYPE=Release -DSWITCHYARD_WERROR=ON "${options[@]}" \
        >"$ROOT/$dir.configure.log" 2>&1 || { cat "$ROOT/$dir.configure.log"; die "cmake configure failed"; }
    grep 'switchyard:' "$ROOT/$dir.configure.log" | sed 's/^-- /[run.sh]   /' || true
    rm -f "$ROOT/$dir.configure.log"
    cmake --build "$ROOT/$dir" -j "$JOBS" "${targets[@]}" >/dev/null 2>"$ROOT/$dir.build.log" ||
        { cat "$ROOT/$dir.build.log"; die "build failed in $dir"; }
    rm -f "$ROOT/$dir.build.log"
}

cmd_build() { configure_build build; }

# run_ctest DIR JOBS [CTEST ARGS...]
run_ctest() {
    local dir=$1 jobs=$2
    shift 2
    say "test: ctest in $dir, $jobs at once $*"
    ctest --test-dir "$ROOT/$dir" --output-on-failure -j "$jobs" --timeout 300 "$@"
}

# The tree's lint: pyflakes over every Python file and clang-format's check over every C and
# C++ file the repository tracks. Findings are fixed, not suppressed; the first finding fails.
cmd_lint() {
    local py=() cc=()
    mapfile -t py < <(git -C "$ROOT" ls-files '*.py')
    mapfile -t cc < <(git -C "$ROOT" ls-files '*.c' '*.h' '*.cc')
    ((${#py[@]} > 0 && ${#cc[@]} > 0)) || die "lint: no tracked files (run it in a git checkout)"
    (cd "$ROOT" && pyflakes3 "${py[@]}") || die "lint: pyflakes found the problems above"
    (cd "$ROOT" && clang-format --dry-run --Werror "${cc[@]}") ||
        die "lint: clang-format would change the files above (clang-format -i FILE)"
    say "lint: ${#py[@]} Python files pass pyflakes, ${#cc[@]} C/C++ files are clang-format clean"
}

# The packages `test` needs beyond PACKAGES: installed when missing (root), else named.
setup_test() {
    installable "test packages" "${TEST_PACKAGES[@]}" || return 0
    local missing=("${INSTALLABLE[@]}")
    say "setup: test packages: apt-get install -y ${missing[*]}"
    { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"; } \
        >/dev/null 2>&1 || say "setup: ${missing[*]} could not be installed"
}

cmd_test() {
    cmd_setup
    setup_test
    cmd_lint
    configure_build build
    run_ctest build "$WAITING_TEST_JOBS"
    configure_build build-asan -DSWITCHYARD_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo
    # Left out under ASan: no-asan (tests that measure system calls or run under valgrind),
    # python (tests that run no program of this build) and matrix (the combinations of a test
    # matrix beyond its covering part: engines/tests/CMakeLists.txt).
    ASAN_OPTIONS=detect_leaks=1 run_ctest build-asan "$COMPUTING_TEST_JOBS" -LE 'no-asan|python|matrix'
    test_aarch64
    test_clang
    say "test: all suites passed"
}

# The clang 19 build, for the backend only it builds (cc-pnone): the switch layer's tests on
# every backend of that build, but memcheck's (valgrind 3.19 cannot read clang 19's DWARF 5,
# whatever the backend). Only the switch layer's programs are built. Without clang-19 it says
# "not run" and why; a clang that lacks preserve_none fails it (switch-info must list the
# backend).
test_clang() {
    local start=$SECONDS dir=build-clang
    if ! command -v clang-19 >/dev/null; then
        say "test: clang build: not run (clang-19 is not installed; ./run.sh setup as root installs it for test)"
        return 0
    fi
    CC=clang-19 CXX=clang++-19 configure_build "$dir" -- switch-tests switch-tests-fortify switch-info
    "$ROOT/$dir/bin/switch-info" --list | grep -qx cc-pnone ||
        die "test: the clang-19 build has no cc-pnone backend (switch-info --list)"
    run_ctest "$dir" "$COMPUTING_TEST_JOBS" -R '^switch/' -E '^switch/memcheck/'
    say "test: clang-19 build's switch tests: $((SECONDS - start)) s (build and tests)"
}

# The aarch64 cross build: the switch layer's tests and the scheduler's, each run under
# qemu-aarch64 (the toolchain file's CROSSCOMPILING_EMULATOR). Timed on its own, so its share
# of the whole test command can be read off on a loaded machine.
test_aarch64() {
    local start=$SECONDS
    configure_build build-aarch64 -DCMAKE_TOOLCHAIN_FILE="$ROOT/$AARCH64_TOOLCHAIN"
    run_ctest build-aarch64 "$COMPUTING_TEST_JOBS"
    say "test: aarch64 suite under qemu-user: $((SECONDS - start)) s (build and tests)"
}

cmd_regress() {
    local extra=()
    while [ $# -gt 0 ]; do
        case $1 in
        --update | --no-base) extra+=("$1") ;;
        --base)
            [ $# -ge 2 ] && [ -n "$2" ] && [ "${2#-}" = "$2" ] || {
                echo "run.sh: regress: --base needs a commit (e.g. --base HEAD~3)" >&2
                exit 2
            }
            extra+=(--base "$2")
            shift
            ;;
        *)
            echo "run.sh: regress: unknown option '$1' (valid: --update, --base REF, --no-base)" >&2
            exit 2
            ;;
        esac
        shift
    done
    cmd_setup
    configure_build build
    say "regress: counts against results/baseline/counts.json, timings against this CPU model's baseline and paired with the base commit's build"
    "$PY" "$ROOT/harness/gate/regress.py" --bin "$ROOT/build/bin" "${extra[@]}"
}

# check_steps PRESET LIST: every name of the comma list is a step of the registry, checked
# before anything is installed or built; an empty list or name is refused, not read as every
# step.
check_steps() {
    local name valid names
    local -A seen=()
    valid=$(suite_steps)
    [[ -n ${2//[, ]/} ]] ||
        { echo "run.sh: $1: --only needs at least one step (valid: $(paste -sd, - <<<"$valid"))" >&2; exit 2; }
    IFS=, read -ra names <<<"$2"
    [[ $2 != *, ]] || names+=("")
    for name in "${names[@]}"; do
        [[ -n $name ]] || { echo "run.sh: $1: an empty step name in --only '$2'" >&2; exit 2; }
        grep -qx -- "$name" <<<"$valid" ||
            { echo "run.sh: $1: unknown step '$name' (valid: $(paste -sd, - <<<"$valid"))" >&2; exit 2; }
        [[ -z ${seen[$name]:-} ]] || { echo "run.sh: $1: step '$name' named twice in --only" >&2; exit 2; }
        seen[$name]=1
    done
}

# take_suite_lock PRESET: one measuring run per machine. Taken before setup and build (a
# build beside a measuring run is measured too) on descriptor 9, which the exec into
# suite.py keeps, together with this pid: suite.py knows the lock for its own by the pid the
# file names. A second run refuses, naming the holder, with exit status 3.
take_suite_lock() {
    local lock holder
    lock=$("$PY" "$ROOT/harness/suite.py" --lock-path)
    { exec 9<>"$lock"; } 2>/dev/null || { echo "run.sh: $1: cannot open the suite lock $lock" >&2; exit 1; }
    if ! flock -n 9; then
        holder=$(tr -dc 0-9 <"$lock")
        echo "run.sh: $1: another suite run is measuring on this machine (pid ${holder:-unknown}, lock $lock); not starting a second" >&2
        exit 3
    fi
    echo $$ >"$lock"
}

# cmd_suite quick|full [--reference] [--only STEPS]: the experiments, charts and report.
cmd_suite() {
    local preset=$1
    shift
    local extra=()
    while (($#)); do
        case $1 in
        --reference) extra+=(--reference) ;;
        --run-dir)
            [[ $# -ge 2 && -n $2 ]] || { echo "run.sh: $preset: --run-dir needs a folder" >&2; exit 2; }
            extra+=(--run-dir "$2")
            shift
            ;;
        --load-host | --bind)
            [[ $# -ge 2 && -n $2 ]] || { echo "run.sh: $preset: $1 needs a value" >&2; exit 2; }
            # Read by the drivers' --load-host and --bind defaults (harness/lib/load.py).
            if [[ $1 == --bind ]]; then export SWITCHYARD_BIND=$2; else
                export SWITCHYARD_LOAD_HOSTS="${SWITCHYARD_LOAD_HOSTS:+$SWITCHYARD_LOAD_HOSTS }$2"; fi
            shift
            ;;
        --only)
            [[ $# -ge 2 ]] || { echo "run.sh: $preset: --only needs a comma list of steps" >&2; exit 2; }
            check_steps "$preset" "$2"
            extra+=(--only "$2")
            shift
            ;;
        *)
            echo "run.sh: $preset: unknown option '$1' (valid: --reference, --only STEPS, --run-dir DIR, --load-host HOST, --bind ADDR)" >&2
            exit 2
            ;;
        esac
        shift
    done
    take_suite_lock "$preset"
    if [[ ${SWITCHYARD_SKIP_BUILD:-} == 1 ]]; then
        # Test-only (harness/tests/suite_faults.py): the suite against the build as it is.
        say "$preset: SWITCHYARD_SKIP_BUILD=1: no setup, no build"
    else
        cmd_setup
        configure_build build
        # The aarch64 build only feeds the switch_emulated step (times labelled as emulated,
        # which no verdict reads), which runs its switch-bench alone (target suite-emulated).
        # Quick brings an existing cross build up to date but makes no first one: that took
        # 13 s of a fresh clone's 6 minutes on the AMD EPYC VM, which the steps that decide
        # claims use instead; full, and ./run.sh test, make it.
        if command -v aarch64-linux-gnu-gcc >/dev/null && command -v qemu-aarch64 >/dev/null; then
            if [[ $preset == full || -f $ROOT/build-aarch64/CMakeCache.txt ]]; then
                configure_build build-aarch64 -DCMAKE_TOOLCHAIN_FILE="$ROOT/$AARCH64_TOOLCHAIN" \
                    -- suite-emulated
            else
                say "$preset: no aarch64 cross build yet, so switch_emulated will say not run (./run.sh full or ./run.sh test makes one)"
            fi
        fi
    fi
    say "$preset: running the suite (progress below; the report path is printed at the end)"
    # exec: a signal to run.sh's pid reaches the suite, which stops every process it started.
    exec "$PY" "$ROOT/harness/suite.py" "$preset" --build-dir "$ROOT/build" \
        --cross-build-dir "$ROOT/build-aarch64" --started-at "$STARTED" "${extra[@]}"
}

cmd_compare() {
    "$PY" "$ROOT/plots/compare.py" "$@"
}

cmd_bands() {
    "$PY" "$ROOT/plots/bands.py" "$@"
}

cmd_history() {
    "$PY" "$ROOT/plots/history.py" "$@"
}

cmd_slides() {
    [[ $# -ge 1 ]] || { echo "run.sh: slides: give one run folder, e.g. results/reference" >&2; exit 2; }
    "$PY" "$ROOT/plots/slides.py" "$@"
}

cmd_report() {
    [[ $# -eq 1 && -d $1 ]] || { echo "run.sh: report: give one run folder, e.g. results/reference" >&2; exit 2; }
    "$PY" "$ROOT/plots/report.py" "$1"
}

sub=${1:-quick}
[[ $# -gt 0 ]] && shift
case $sub in
--reference | --only) cmd_suite quick "$sub" "$@" ;;
quick | full) cmd_suite "$sub" "$@" ;;
report) cmd_report "$@" ;;
slides) cmd_slides "$@" ;;
compare) cmd_compare "$@" ;;
bands) cmd_bands "$@" ;;
history) cmd_history "$@" ;;
setup) cmd_setup ;;
build) cmd_build ;;
lint) cmd_lint ;;
test) cmd_test ;;
regress) cmd_regress "$@" ;;
help | -h | --help) usage ;;
*)
    echo "run.sh: unknown subcommand '$sub' (valid: quick, full, setup, build, lint, test, regress, report, slides, compare, bands, history, help, or none)" >&2
    exit 2
    ;;
esac
