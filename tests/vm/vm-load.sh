#!/bin/sh
# In the VM (tests/vm/run.sh starts it): vptz is loaded with its defaults; with PARAMS it is loaded
# again with them. Then CMD runs with VPTZ_KO set, so it can load the module again itself.
#   vm-load.sh KO PARAMS CMD [ARG...]
ko=$1
params=$2
shift 2
export VPTZ_KO="$ko"
if [ -n "$params" ]; then
    # shellcheck disable=SC2086 # PARAMS is a list of name=value words
    rmmod vptz && insmod "$ko" $params || { echo "vm-load.sh: cannot load $ko $params" >&2; exit 125; }
fi
exec "$@"
