#!/usr/bin/env bash
# Renders a report's index.html (as `arbiter report` or `arbiter match -report DIR` writes it)
# with headless Chromium and saves the screenshot, to look at a report as a reader sees it or to
# refresh docs/example-report/screenshot.png.
#   scripts/report-screenshot.sh REPORT_DIR OUT.png [WIDTH,HEIGHT]
# The default window is one column of the page at desktop width, tall enough for every chart of a
# match's report. Chromium comes from Debian (scripts/ci-setup.sh installs it).
set -euo pipefail

if [ $# -lt 2 ] || [ $# -gt 3 ]; then
  echo "usage: $0 REPORT_DIR OUT.png [WIDTH,HEIGHT]" >&2
  exit 2
fi
report_dir=$1
out=$2
size=${3:-900,3850}
page="$report_dir/index.html"
[ -f "$page" ] || { echo "report-screenshot: $page does not exist (expected a report folder)" >&2; exit 2; }
[[ "$size" =~ ^[0-9]+,[0-9]+$ ]] || { echo "report-screenshot: window size $size: expected WIDTH,HEIGHT" >&2; exit 2; }
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { echo "report-screenshot: chromium is not installed (run scripts/ci-setup.sh)" >&2; exit 1; }

# A profile of its own: no first-run state or lock shared with a browser the user has open.
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
out_abs=$(realpath -m "$out")
page_abs=$(realpath "$page")
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
  --user-data-dir="$profile" --window-size="$size" --screenshot="$out_abs" \
  "file://$page_abs" >/dev/null 2>&1
[ -s "$out_abs" ] || { echo "report-screenshot: chromium wrote no screenshot to $out" >&2; exit 1; }
echo "$out"
