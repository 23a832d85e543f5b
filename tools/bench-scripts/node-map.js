// A Map and an array sort in node: V8 compiles and patches code as it runs
// (stores into code pages), tools/bench group "jit".
const m = new Map();
let s = 0;
for (let i = 0; i < 200000; i++) { m.set('k' + (i % 5000), i); s += m.get('k' + (i % 777)) | 0; }
const a = []; for (let i = 0; i < 100000; i++) a.push({x: i, y: String(i)});
a.sort((p, q) => q.x - p.x);
console.log(s, a[0].y, JSON.stringify(a.slice(0, 3)).length);
