#!/bin/sh
# rtk-hook-version: 1
# rtk-policy delegate for every agent: hands the hook payload on stdin to `rtk-policy hook AGENT`.
#   usage: rtk-policy-hook.sh claude|copilot|gemini|cursor|codex   (default: claude)
#   RTK_POLICY_BIN   absolute path of the rtk-policy executable (default: rtk-policy on PATH)
#   RTK_POLICY_FAIL  what to answer when the executable is missing: open (default), closed (ask), deny
agent="${1:-claude}"
bin="${RTK_POLICY_BIN:-rtk-policy}"
if command -v "$bin" >/dev/null 2>&1; then
  exec "$bin" hook "$agent"
fi
echo "rtk-policy hook: '$bin' not found; install rtk-policy or set RTK_POLICY_BIN" >&2
case "${RTK_POLICY_FAIL:-open}" in
  closed) verdict=ask action="asking for approval" ;;
  deny) verdict=deny action="blocking the command" ;;
  *) # open: no opinion (Cursor needs an empty object)
    if [ "$agent" = cursor ]; then printf '%s\n' '{}'; fi
    exit 0 ;;
esac
reason="rtk-policy is not installed (executable not found); $action"
case "$agent" in
  copilot) printf '{"permissionDecisionReason":"%s","permissionDecision":"%s"}\n' "$reason" "$verdict" ;;
  gemini)
    if [ "$verdict" = ask ]; then extra=",\"systemMessage\":\"$reason\""; else extra=""; fi
    printf '{"decision":"%s","reason":"%s"%s}\n' "$verdict" "$reason" "$extra" ;;
  codex)  # a Codex hook cannot ask: an ask is a deny telling the model to get the user's approval
    if [ "$verdict" = ask ]; then
      reason="this command needs the user's approval ($reason); a Codex hook cannot ask for approval, so rtk-policy blocked it: do not retry it or a variant; ask the user to approve it or to run it themselves"
    fi
    printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecisionReason":"%s","permissionDecision":"deny"}}\n' "$reason" ;;
  cursor)
    if [ "$verdict" = ask ]; then extra=""; else extra=",\"agent_message\":\"$reason\""; fi
    printf '{"continue":true,"permission":"%s","user_message":"%s"%s}\n' "$verdict" "$reason" "$extra" ;;
  *) printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecisionReason":"%s","permissionDecision":"%s"}}\n' "$reason" "$verdict" ;;
esac
exit 0
