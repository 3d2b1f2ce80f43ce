# Sourced by install.sh and test.sh: times each step of a setup or a test
# run, and prints what each took at the end, so that a slow run says where
# its time went.
#   step "name"    ends the step before (if any) and begins this one
#   steps_report   ends the last step and prints every step's seconds

_step_names=()
_step_seconds=()
_step_name=""
_step_began=0

step() {
  local now=$SECONDS
  if [ -n "$_step_name" ]; then
    _step_names+=("$_step_name")
    _step_seconds+=($((now - _step_began)))
  fi
  _step_name="$1"
  _step_began=$now
}

steps_report() {
  step ""
  local i total=0
  echo "time per step:"
  for i in "${!_step_names[@]}"; do
    printf '  %5d s  %s\n' "${_step_seconds[$i]}" "${_step_names[$i]}"
    total=$((total + _step_seconds[i]))
  done
  printf '  %5d s  in all\n' "$total"
}
