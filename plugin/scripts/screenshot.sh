#!/usr/bin/env bash
# Renders the vaultlink panel in headless Chromium, one PNG per harness
# scenario (digest node, failed daily note, settling daily note, daemon
# down), into build/screenshots/. Installs Debian's chromium if missing.
#   bash scripts/screenshot.sh      (from plugin/, after npm ci)
set -euo pipefail
cd "$(dirname "$0")/.."

CHROMIUM=/usr/bin/chromium
if [ ! -x "$CHROMIUM" ]; then
	echo "chromium not found: installing Debian's package"
	apt-get update && apt-get install -y chromium
fi

OUT=build/screenshots
mkdir -p "$OUT"

node scripts/harness.mjs | while read -r page; do
	name=$(basename "$page" .html)
	profile=$(mktemp -d)
	# Flags keep the run offline and quiet: no sandbox (root in a container),
	# no GPU, no background fetches or component updates.
	"$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$profile" --window-size=420,900 \
		--screenshot="$OUT/$name.png" "file://$page" >/dev/null 2>&1
	rm -rf "$profile"
	echo "$OUT/$name.png"
done
