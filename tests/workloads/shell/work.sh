#!/bin/bash
# The shell workload: everyday coreutils in the current directory. Prints a summary that
# run_workloads.sh compares with what these steps must produce.
set -eu
mkdir -p src/sub out
printf 'pear\napple\nfig\napple\n' >src/fruit.txt
date +%Y >src/sub/year.txt
cp src/fruit.txt out/copy.txt
mv out/copy.txt out/moved.txt
sort -u out/moved.txt >out/sorted.txt
sed 's/apple/APPLE/' out/sorted.txt >out/edited.txt
ln -s edited.txt out/link.txt
chmod 600 out/edited.txt
tar -cf out/src.tar src
mkdir extracted
tar -xf out/src.tar -C extracted
rm out/moved.txt
rm -r extracted/src/sub
echo "lines $(wc -l <out/sorted.txt)"
echo "apples $(grep -c APPLE out/link.txt)"
echo "files $(find out extracted -type f | sort | tr '\n' ' ')"
echo "mode $(stat -c %a out/edited.txt)"
