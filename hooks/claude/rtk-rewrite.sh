#!/bin/sh
# rtk-policy delegate for Claude Code: runs ../rtk-policy-hook.sh claude (RTK_POLICY_BIN, RTK_POLICY_FAIL as there).
self=$(readlink -f -- "$0" 2>/dev/null) || self=$0
case "$self" in */*) ;; *) self=./$self ;; esac
exec sh "${self%/*}/../rtk-policy-hook.sh" claude
