#!/bin/sh
# rtk-hook-version: 1
# rtk-policy delegate for Cursor: hands the hook payload on stdin to `rtk-policy hook cursor`.
#   RTK_POLICY_BIN   absolute path of the rtk-policy executable (default: rtk-policy on PATH)
#   RTK_POLICY_FAIL  what to answer when the executable is missing: open (default), closed (ask), deny
bin="${RTK_POLICY_BIN:-rtk-policy}"
if command -v "$bin" >/dev/null 2>&1; then
  exec "$bin" hook cursor
fi
echo "rtk-policy hook: '$bin' not found; install rtk-policy or set RTK_POLICY_BIN" >&2
case "${RTK_POLICY_FAIL:-open}" in
  closed) printf '%s\n' '{"continue":true,"permission":"ask","user_message":"rtk-policy is not installed (executable not found); asking for approval"}' ;;
  deny) printf '%s\n' '{"continue":true,"permission":"deny","user_message":"rtk-policy is not installed (executable not found); blocking the command","agent_message":"rtk-policy is not installed (executable not found); blocking the command"}' ;;
  *) printf '%s\n' '{}' ;;
esac
exit 0
