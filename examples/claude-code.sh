#!/usr/bin/env bash
# aura with Claude Code: `aura hook install claude-code --settings ~/.claude/settings.json` puts
# aura's hooks into Claude Code's settings. This script plays what Claude Code then does: one hook
# process per event, the hook input on stdin, aura's answer on stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
hook() { node dist/cli/bin.cjs hook claude-code --profile examples/claude-code.yaml; }
session='{"session_id":"example-session","cwd":"'"$PWD"'","permission_mode":"default"'

echo "${session},\"hook_event_name\":\"SessionStart\",\"source\":\"startup\"}" | hook
echo "${session},\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"rm -rf build\"},\"tool_use_id\":\"toolu_1\"}" | hook
echo "${session},\"hook_event_name\":\"PreToolUse\",\"tool_name\":\"Read\",\"tool_input\":{\"file_path\":\"$PWD/README.md\"},\"tool_use_id\":\"toolu_2\"}" | hook
echo "${session},\"hook_event_name\":\"PostToolUse\",\"tool_name\":\"Read\",\"tool_input\":{\"file_path\":\"$PWD/README.md\"},\"tool_response\":{\"type\":\"text\"},\"tool_use_id\":\"toolu_2\"}" | hook
echo "${session},\"hook_event_name\":\"SessionEnd\",\"reason\":\"prompt_input_exit\"}" | hook
node dist/cli/bin.cjs sessions list
