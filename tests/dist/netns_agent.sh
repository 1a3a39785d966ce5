#!/bin/sh
# Remote-start agent for mpirun (--mca plm_rsh_agent) in the network-namespace test.
# mpirun calls it as it would call ssh: `netns_agent.sh [options] HOST COMMAND...`.
# Here a "host" is a network namespace on this machine: OAR_NETNS_HOSTS lists
# "IP=NAMESPACE=HOSTNAME" entries, and the command runs inside that namespace with a
# hostname of its own (a UTS namespace), so that OpenMPI sees separate machines that
# can reach each other only over the network.
while [ $# -gt 0 ]; do
  case "$1" in -*) shift ;; *) break ;; esac
done
host=$1
shift
ns=
for entry in $OAR_NETNS_HOSTS; do
  case "$entry" in
    "$host="*) rest=${entry#*=}; ns=${rest%%=*}; name=${rest#*=} ;;
  esac
done
if [ -z "$ns" ]; then
  echo "netns_agent.sh: no namespace for host '$host' in OAR_NETNS_HOSTS='$OAR_NETNS_HOSTS'" >&2
  exit 255
fi
# Like ssh, hand the command to a shell on the "remote" side.
exec ip netns exec "$ns" unshare --uts sh -c 'hostname "$0" && eval "$1"' "$name" "$*"
