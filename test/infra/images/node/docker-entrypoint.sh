#!/bin/sh
set -e
# As the official image's entrypoint: run the arguments with node when the first one is a flag or not
# a command (`docker run image -e 'x'`, `docker run image script.js`).
if [ "${1#-}" != "${1}" ] || [ -z "$(command -v "${1}")" ] || { [ -f "${1}" ] && ! [ -x "${1}" ]; }; then
  set -- node "$@"
fi
exec "$@"
