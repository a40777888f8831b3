#!/usr/bin/env bash
# Install the agent CLIs the end-to-end suite drives, pinned, into a cache folder (idempotent).
#
#   tests/e2e/install_clis.sh            # into ${RTK_E2E_CACHE:-$HOME/.cache/rtk-policy-e2e}
#   RTK_E2E_CLIS=/some/dir tests/e2e/install_clis.sh
#
# The tests find the CLIs in $RTK_E2E_CLIS, else in the same default cache folder. Each CLI gets
# its own npm prefix (<cache>/<name>/node_modules/.bin/<bin>), so one failing install does not
# hide the others and a version bump reinstalls only that CLI. Needs Node >= 20 and npm.
set -euo pipefail

dest="${RTK_E2E_CLIS:-${RTK_E2E_CACHE:-$HOME/.cache/rtk-policy-e2e}}"
mkdir -p "$dest"

# name  npm-spec  bin
clis=(
  "claude   @anthropic-ai/claude-code@2.1.328  claude"
  "codex    @openai/codex@0.169.0              codex"
  "gemini   @google/gemini-cli@0.61.0          gemini"
  "copilot  @github/copilot@1.0.102            copilot"
)

for row in "${clis[@]}"; do
  read -r name spec bin <<<"$row"
  prefix="$dest/$name"
  stamp="$prefix/.installed"
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$spec" && -x "$prefix/node_modules/.bin/$bin" ]]; then
    echo "$spec: already in $prefix"
    continue
  fi
  echo "$spec: installing into $prefix"
  mkdir -p "$prefix"
  # --include=optional: Claude Code's native binary is the optional dependency
  # @anthropic-ai/claude-code-linux-x64 (or the matching platform package).
  npm install --prefix "$prefix" --no-audit --no-fund --no-save --include=optional \
    --loglevel=error "$spec"
  "$prefix/node_modules/.bin/$bin" --version >/dev/null
  echo "$spec" >"$stamp"
done
echo "agent CLIs ready in $dest"
