// A node program of varied phases for the accuracy suite (t8092): sorting,
// JSON, regular expressions, string building and arithmetic, each phase
// of a length drawn at random (no aliasing with the sampling rate), until
// killed.  Prints "ready" once running.
'use strict';
function sortWork(n) {
  const a = [];
  for (let i = 0; i < n; i++) a.push((i * 7919) % 10007 + Math.random());
  a.sort((x, y) => x - y);
  return a[n >> 1];
}
function jsonWork(n) {
  const o = [];
  for (let i = 0; i < n; i++) o.push({ id: i, name: 'item' + i, tags: ['a', 'b', String(i % 13)] });
  return JSON.parse(JSON.stringify(o)).length;
}
function regexWork(n) {
  let s = '', c = 0;
  for (let i = 0; i < n; i++) s += 'key' + i + '=' + (i * 31 % 97) + ';';
  const re = /key(\d+)=(\d+);/g;
  let m;
  while ((m = re.exec(s)) !== null) c += m[2].length;
  return c;
}
function mathWork(n) {
  let x = 0;
  for (let i = 1; i < n; i++) x += Math.sqrt(i) * Math.sin(i) / (1 + (i % 17));
  return x;
}
const work = [sortWork, jsonWork, regexWork, mathWork];
const size = [20000, 3000, 6000, 400000];
let sink = 0;
console.log('ready');
for (;;) {
  const k = Math.floor(Math.random() * work.length);
  sink += work[k](Math.floor(size[k] * (0.3 + 1.7 * Math.random())));
  if (sink === -1) console.log(sink);
}
