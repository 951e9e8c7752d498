#!/bin/bash
# A command agent in bash alone: it asks the model one question over /dev/tcp (the run's
# endpoint, the one address the container reaches) and writes down where it ran.
url=$OPENAI_BASE_URL
hostport=${url#http://}; hostport=${hostport%%/*}
path=/${url#http://*/}/responses
exec 3<>/dev/tcp/${hostport%:*}/${hostport#*:} || exit 3
body='{"model":"scripted","input":"Where are you?","stream":false}'
printf 'POST %s HTTP/1.1\r\nHost: evalhost\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s' \
  "$path" ${#body} "$body" >&3
cat <&3 >/dev/null
cat /etc/evalhost-environment > where.txt
