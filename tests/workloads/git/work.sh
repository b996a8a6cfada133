#!/bin/bash
# The git workload: a repository in the current directory, two commits, the log.
set -eu
export GIT_AUTHOR_NAME=Workload GIT_AUTHOR_EMAIL=workload@example.org
export GIT_COMMITTER_NAME=Workload GIT_COMMITTER_EMAIL=workload@example.org
git init -q -b main repo
cd repo
echo one >a.txt
mkdir dir
echo two >dir/b.txt
git add a.txt dir
git commit -q -m first
echo three >>a.txt
git -c core.autocrlf=false commit -q -a -m second
git log --format=%s
git show --stat --format= HEAD | tail -n 1
