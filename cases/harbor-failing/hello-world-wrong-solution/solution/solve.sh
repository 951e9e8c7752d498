#!/bin/bash
# Wrong on purpose: no comma, so the verifier writes a reward of 0.
echo "Hello world" > /app/hello.txt
