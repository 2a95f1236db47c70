#!/usr/bin/env bash
# The first minute of a new user: a fresh copy of this checkout (no .venv, no demo data),
# `./run demo`, and the time until its first page answers; then the venv's size.
#   bench/bench_first_run.sh [PORT]     (default 8099; the copy goes to a temporary directory)
set -euo pipefail
port=${1:-8099}
src=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'kill -- -"$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
git -C "$src" ls-files -z --cached --others --exclude-standard \
    | (cd "$src" && xargs -0 cp --parents -t "$work" 2>/dev/null || true)
cd "$work"
start=$(date +%s.%N)
setsid ./run demo --port "$port" >"$work/demo.log" 2>&1 &
pid=$!
for _ in $(seq 1 1200); do  # at most 10 minutes
    if curl -fsS -o /dev/null "http://127.0.0.1:$port/" 2>/dev/null; then
        break
    fi
    if ! kill -0 "$pid" 2>/dev/null; then
        echo "./run demo exited:"; cat "$work/demo.log"; exit 1
    fi
    sleep 0.5
done
end=$(date +%s.%N)
printf 'cold ./run demo to the first page: %.1f s\n' "$(echo "$end - $start" | bc)"
printf 'venv size: %s\n' "$(du -sh .venv | cut -f1)"
printf 'installed packages: %s\n' "$(.venv/bin/python -m pip list 2>/dev/null | tail -n +3 | wc -l)"
# Everything ./run demo printed, but pip's complaints about find-links directories that a
# machine's own pip configuration names and lacks (not ours to silence).
echo "output of ./run demo:"
grep -v "^WARNING: Location '.*' is ignored" "$work/demo.log" | head -40
