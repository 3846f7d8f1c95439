#!/usr/bin/env node
// psvg's SVGs in a real browser: Debian's Chromium (/usr/bin/chromium),
// headless, driven by playwright-core (which downloads no browser).
//
//   node tests/browser/psvg.test.js PSVG_BINARY CONFORMANCE_DIR
//
// Prints one line per check: "ok - ...", "not ok - ..." or "skip - ... # why".
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { execFileSync } = require('child_process');

const [psvg, conf] = process.argv.slice(2);
const { CHROMIUM, launch, needPlaywright, tap } = require('./chromium');
needPlaywright('browser tests');

const t = tap('browser');
const { ok, notok, check } = t;

if (!fs.existsSync(CHROMIUM)) {
	console.log(`skip - browser tests # ${CHROMIUM} not found (apt-get install chromium)`);
	process.exit(0);
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'psvg-browser-'));
function render(name, input, args = []) {
	const inFile = path.join(tmp, name + '.in');
	if (typeof input === 'string' || Buffer.isBuffer(input)) fs.writeFileSync(inFile, input);
	const out = path.join(tmp, name + '.svg');
	execFileSync(psvg, [...args, '-o', out, typeof input === 'object' && input.file ? input.file : inFile],
		{ stdio: ['ignore', 'ignore', 'ignore'] });
	return out;
}
// Folded lines as psvg names frames: annotations (_[k] ...) dropped.
function readFolded(file) {
	return fs.readFileSync(file, 'utf8').split('\n').filter((l) => /\s\d+(\.\d+)?$/.test(l)).map((l) => {
		const m = l.match(/^(.*?)\s+(\d+(?:\.\d+)?)$/);
		const frames = m[1].split(';').filter((f, i, a) => !(f === '' && i === a.length - 1))
			.map((f) => f.replace(/_\[[kjiw]\]$/, ''));
		return { frames, n: +m[2] };
	});
}
// The share of samples with at least one frame matching re (once per sample).
function share(lines, re, prefix = []) {
	let all = 0, hit = 0;
	for (const l of lines) {
		if (prefix.some((p, i) => l.frames[i] !== p)) continue;
		all += l.n;
		if (l.frames.some((f) => re.test(f))) hit += l.n;
	}
	return all ? (100 * hit / all).toFixed(2) + '%' : '-';
}

(async () => {
	const vxFolded = path.join(conf, 'inferno/svg-sorted-input/input.folded');
	if (!fs.existsSync(vxFolded)) {
		console.log(`skip - browser tests # conformance fixtures not found at ${conf}`);
		return;
	}
	const vx = render('vx', { file: vxFolded });
	const vxLines = readFolded(vxFolded);
	const narrow = render('narrow', 'a;big 100000\na;mid 1000\na;mid;small 5\na;mid;small;tiny 5\n');
	const slivers = render('slivers', 'a;k1 5000\na;k2 8\na;k3 5000\n');
	const rec = render('rec', 'main;a;b;a;b 10\nmain;a 5\nmain;c 5\n');
	const deepPath = ['main'].concat(Array.from({ length: 118 }, (_, k) => 'deep' + k)).join(';');
	const deep = render('deep', Array.from({ length: 20 }, (_, k) => `main;work;f${k} 500\n`).join('') + deepPath + ' 1\n');
	// perf script of cpu-clock (the demo's real recording): its period is
	// time, shown as ms/s in tooltips, the details bar and the flame chart.
	const demo = path.join(__dirname, '../../share/demo/perf-demo.txt.gz');
	const timed = render('timed', { file: demo });
	const chart = render('chart', { file: demo }, ['--flamechart']);
	// frames with source lines (speedscope JSON with file and line, as from a
	// pcollect --lines stream): file:line in the details bar and the tooltip
	const pysrc = render('pysrc', JSON.stringify({ $schema: 'https://www.speedscope.app/file-format-schema.json',
		shared: { frames: [{ name: 'main', file: 'app.c', line: 10 }, { name: 'work', file: 'app.c', line: 20 }, { name: 'work', file: 'app.c', line: 21 }] },
		profiles: [{ type: 'sampled', name: 't', unit: 'none', startValue: 0, endValue: 8, samples: [[0, 1], [0, 2]], weights: [5, 3] }] }));
	const diffIn = path.join(conf, 'inferno/svg-differential/input.folded');
	const diff = render('diff', { file: diffIn });
	const evilNames = [
		'<script>window.__pwned=1</script>',
		']]><script>window.__pwned=2</script>',
		'</text></g><svg onload="window.__pwned=3">',
		'<img src=x onerror="window.__pwned=4">',
		'"+(window.__pwned=5)+"',
		"')+(window.__pwned=6)//",
		'&lt b&gt &amp \\u003c \\x41 %3C',
		'javascript:window.__pwned=7',
	]; // no ';': it separates frames
	const evilBytes = Buffer.concat([
		Buffer.from(evilNames.map((n) => `root;${n} 10\n`).join('')),
		Buffer.from('root;nul\0esc\x1b[31mred\xadsoft\xff\xfe 10\n', 'latin1'),
		Buffer.from('root;\u2028sep\u2029 10\n'),
	]);
	const evil = render('evil', evilBytes, ['--title', '<script>window.__pwned=8</script> & "t"',
		'--nametype', '</text><script>window.__pwned=9</script>', '--countname', '<i>units</i>']);

	const dir = fs.mkdtempSync(path.join(tmp, 'profile-'));
	const ctx = await launch(dir, { width: 1280, height: 1300 });
	const page = await ctx.newPage();
	const errors = [];
	let dialogs = [];
	let promptAnswer = null;
	page.on('pageerror', (e) => errors.push(e.message));
	page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
	page.on('dialog', async (d) => {
		dialogs.push(d.type() + ':' + d.message());
		if (d.type() === 'prompt' && promptAnswer !== null) await d.accept(promptAnswer);
		else await d.dismiss();
	});
	const state = () => page.evaluate(() => spflame.api.state());
	const open = async (file, hash = '') => {
		errors.length = 0;
		await page.goto('file://' + file + hash);
		await page.waitForFunction(() => window.spflame && window.spflame.api);
	};
	// Centre of the drawn rect of frame i, or null when it is not drawn.
	const rectOf = (i) => page.evaluate((i) => {
		const r = [...document.querySelectorAll('#frames rect')].find((e) => e.__i === i);
		if (!r) return null;
		const b = r.getBoundingClientRect();
		return { x: b.x + b.width / 2, y: b.y + b.height / 2, w: b.width, ax: +r.getAttribute('x'),
			aw: +r.getAttribute('width'), cls: r.getAttribute('class'), fill: r.getAttribute('fill') };
	}, i);
	const text = (id) => page.evaluate((id) => document.getElementById(id).textContent, id);
	const searchByKeys = async (re) => {
		promptAnswer = re;
		await page.keyboard.press('Control+F');
		await page.waitForFunction((re) => spflame.api.state().term === re, re);
		promptAnswer = null;
	};

	try {
		// ---- load ----
		await open(vx);
		let st = await state();
		const staticRects = await page.evaluate(() => document.querySelectorAll('#frames rect').length);
		check('the graph loads without script errors', errors.length === 0, errors.join('; '));
		check(`the overview's ${staticRects} frames are live (the script adopted the drawn SVG)`,
			st.drawn === staticRects && staticRects > 100, `${st.drawn} vs ${staticRects}`);

		// ---- click to zoom ----
		const psk = await page.evaluate(() => spflame.api.find('io/netty/channel/nio/NioEventLoop:.processSelectedKeys'));
		let r = await rectOf(psk);
		await page.mouse.click(r.x, r.y);
		st = await state();
		r = await rectOf(psk);
		const anc = await page.evaluate(() => document.querySelectorAll('#frames rect.parent').length);
		check('click zooms: the frame spans the width', st.zoomed === psk && r && r.ax === 10 && Math.abs(r.aw - 1180) < 0.2,
			JSON.stringify({ st, r }));
		check('zoom keeps the ancestors, dimmed', anc >= 10 && !(await page.isHidden('#unzoom')), `${anc} dimmed`);
		check('the zoom is in the URL', page.url().endsWith('#z=' + psk), page.url());
		// details line and tooltip
		await page.mouse.move(r.x, r.y);
		const det = await text('details');
		// (folded text: a bare number, its unit unknown)
		check('hovering shows name, value, share of total and of the zoomed frame',
			/^Function: io\/netty\/channel\/nio\/NioEventLoop:\.processSelectedKeys \(\d+, [\d.]+%; 100\.00% of zoomed\)$/.test(det) &&
			!(await page.isHidden('#tip')), det);

		// ---- search (Ctrl-F), counted once per sample, right while zoomed ----
		await searchByKeys('^tcp_');
		st = await state();
		// the zoomed frame's path: its dimmed ancestors (not "all") and itself
		const pathNames = await page.evaluate((i) => [...document.querySelectorAll('#frames rect')]
			.filter((e) => e.__i && (e.classList.contains('parent') || e.__i === i)).map((e) => spflame.api.name(e.__i)), psk);
		const wantAll = share(vxLines, /^tcp_/), wantZoom = share(vxLines, /^tcp_/, pathNames);
		check(`search shows the matched share of all and of the zoomed frame (${wantAll}, ${wantZoom})`,
			st.matched === `Matched: ${wantAll} (${wantZoom} of zoomed)`, st.matched);
		const hl = await page.evaluate(() => [...document.querySelectorAll('#frames rect')]
			.filter((e) => e.getAttribute('fill') === spflame.sc).map((e) => e.__i));
		const hlNames = await page.evaluate((ids) => ids.map((i) => spflame.api.name(i)), hl);
		check('search highlights exactly the matching drawn frames', hl.length > 0 && hlNames.every((n) => /^tcp_/.test(n)),
			`${hl.length} highlighted: ${hlNames.slice(0, 3)}`);
		check('the search is in the URL', page.url().includes('s=%5Etcp_'), page.url());
		// reset zoom: the overall share stays
		await page.click('#unzoom');
		st = await state();
		check('zooming out keeps the search and its overall share', st.zoomed === 0 && st.matched === `Matched: ${wantAll}`, st.matched);
		// names only: "samples" matches nothing, "$" anchors at the name's end
		await page.click('#search'); // "Reset Search"
		await searchByKeys('samples');
		st = await state();
		check('search matches names only, not the "N samples" text', st.matched === 'Matched: 0.00%', st.matched);
		await page.click('#search');
		await searchByKeys('Optimized$');
		st = await state();
		check('a regular expression anchored at the end ("Optimized$") works',
			st.matched === `Matched: ${share(vxLines, /Optimized$/)}`, st.matched);
		// Ctrl-I
		await page.click('#search');
		await searchByKeys('^TCP_');
		const before = (await state()).matched;
		await page.keyboard.press('Control+I');
		st = await state();
		check('Ctrl-I toggles case (^TCP_ matches nothing, then what ^tcp_ matches)',
			before === 'Matched: 0.00%' && st.ignorecase && st.matched === `Matched: ${wantAll}` && page.url().includes('i=1'),
			`${before} / ${st.matched}`);
		// Esc resets zoom and search
		await page.mouse.click((await rectOf(psk)).x, (await rectOf(psk)).y);
		await page.keyboard.press('Escape');
		st = await state();
		const fillsBack = await page.evaluate(() => [...document.querySelectorAll('#frames rect')]
			.every((e) => e.getAttribute('fill') !== spflame.sc));
		check('Esc resets zoom and search', st.zoomed === 0 && st.term === null && st.matched === ' ' && fillsBack &&
			(await page.isHidden('#unzoom')), JSON.stringify(st));
		check('reset leaves no zoom or search in the URL', !/[#&](z|s)=/.test(page.url()), page.url());

		// ---- a shared link restores the view; Back undoes a zoom ----
		await open(vx, `#z=${psk}&s=${encodeURIComponent('^tcp_')}`);
		st = await state();
		check('a link with #z=..&s=.. opens zoomed and searched', st.zoomed === psk && st.term === '^tcp_' &&
			st.matched === `Matched: ${wantAll} (${wantZoom} of zoomed)`, JSON.stringify(st));
		const child = await page.evaluate((i) => spflame.api.find('io/netty/channel/nio/NioEventLoop:.processSelectedKeysOptimized'), psk);
		r = await rectOf(child);
		await page.mouse.click(r.x, r.y);
		await page.goBack();
		await page.waitForFunction((z) => spflame.api.state().zoomed === z, psk, { timeout: 2000 }).catch(() => {});
		st = await state();
		check("the browser's Back undoes a zoom", st.zoomed === psk, `zoomed ${st.zoomed}`);

		// ---- zoom reveals frames the overview hid ----
		await open(narrow);
		const tiny = await page.evaluate(() => spflame.api.find('tiny'));
		const mid = await page.evaluate(() => spflame.api.find('mid'));
		const hidden = (await rectOf(tiny)) === null;
		r = await rectOf(mid);
		await page.mouse.click(r.x, r.y);
		const shown = await rectOf(tiny);
		check('zooming in draws a frame narrower than --minwidth in the overview',
			hidden && shown && shown.aw > 0.5, JSON.stringify({ hidden, shown }));

		// ---- frames under a pixel wide are drawn, and found by the pointer ----
		await open(slivers);
		const s2 = await page.evaluate(() => spflame.api.find('k2'));
		const box = await page.evaluate((i) => spflame.api.box(i), s2);
		const paths = await page.evaluate(() => document.querySelectorAll('#frames path.narrow').length);
		await page.mouse.move(box.x + box.w / 2, box.y + box.h / 2);
		const ds = await text('details');
		check('frames under a pixel wide are drawn (as slivers) and hovering one names it',
			box.w < 1 && paths > 0 && /^Function: k2 \(8, /.test(ds), `${box.w} px, ${paths} paths: ${ds}`);
		await page.mouse.click(box.x + box.w / 2, box.y + box.h / 2);
		st = await state();
		check('clicking a sliver zooms to it', st.zoomed === s2, JSON.stringify(st));

		// ---- units: time as ms/s, not a period sum called samples ----
		for (const [what, file] of [['flame graph', timed], ['flame chart', chart]]) {
			await open(file);
			r = await rectOf(1);
			await page.mouse.move(r.x, r.y);
			const dt = await text('details');
			check(`${what} of a cpu-clock recording: the details bar shows time (ms or s), not samples`,
				/\([\d,]+\.\d\d (ms|s), [\d.]+%/.test(dt) && !/samples/.test(dt), dt);
		}

		// ---- source lines ----
		await open(pysrc);
		const iw = await page.evaluate(() => spflame.api.find('work'));
		r = await rectOf(iw);
		await page.mouse.move(r.x, r.y);
		const dsrc = await text('details');
		const tipText = await page.evaluate(() => [...document.querySelectorAll('#tip text')].map((e) => e.textContent).join(' | '));
		check('a frame with source lines shows where it is in the details bar and the tooltip',
			/^Function: work at app\.c, several lines \(8 samples, 100\.00%/.test(dsrc) && /app\.c, several lines/.test(tipText), `${dsrc} / ${tipText}`);
		const im = await page.evaluate(() => spflame.api.find('main'));
		r = await rectOf(im);
		await page.mouse.move(r.x, r.y);
		const dmod = await text('details');
		check('... and one line when all its frames agree', /^Function: main at app\.c:10 \(/.test(dmod), dmod);

		// ---- recursion is counted once ----
		await open(rec);
		await page.evaluate(() => spflame.api.search('^a$'));
		st = await state();
		check('recursive frames are counted once per sample (a;b;a;b: 75.00%)', st.matched === 'Matched: 75.00%', st.matched);

		// ---- a rare very deep stack does not make the first view tall ----
		await open(deep);
		const staticH = +fs.readFileSync(deep, 'utf8').match(/<svg[^>]* height="(\d+(?:\.\d+)?)"/)[1];
		const h0 = await page.evaluate(() => +document.querySelector('svg').getAttribute('height'));
		check('deep sliver: the first view is as tall as its frames of a pixel or more (static and scripted)',
			h0 < 200 && h0 === staticH, `scripted ${h0}, static ${staticH}`);
		await page.evaluate(() => spflame.api.zoom(spflame.api.find('deep0')));
		const h1 = await page.evaluate(() => +document.querySelector('svg').getAttribute('height'));
		const leaf = await page.evaluate(() => spflame.api.find('deep117'));
		const leafRect = await rectOf(leaf);
		check('deep sliver: zooming into it shows the whole stack', h1 > 1900 && leafRect !== null, `height ${h1}`);

		// ---- differential ----
		await open(diff);
		const fills = await page.evaluate(() => [...document.querySelectorAll('#frames rect')].map((e) => e.getAttribute('fill')));
		const red = fills.filter((f) => /^(rgb\(255,(\d+),\2\)|#ff([0-9a-f]{2})\3)$/.test(f) && !/255,255,255|#ffffff/.test(f)).length;
		const blue = fills.filter((f) => /^(rgb\((\d+),\2,255\)|#([0-9a-f]{2})\3ff)$/.test(f) && !/255,255,255|#ffffff/.test(f)).length;
		check('a differential graph shows growth in red and shrinkage in blue', red > 0 && blue > 0, `${red} red, ${blue} blue`);
		r = await rectOf(1);
		await page.mouse.move(r.x, r.y);
		const dd = await text('details');
		check('a differential tooltip shows both values and the change', /\d+, [\d.]+%; before \d+, change [-+]?\d+ \(/.test(dd), dd);

		// ---- hostile names execute nothing and render as text ----
		dialogs = [];
		await open(evil);
		await page.waitForTimeout(200);
		const pwned = await page.evaluate(() => window.__pwned);
		const scripts = await page.evaluate(() => document.querySelectorAll('script').length);
		const handlers = await page.evaluate(() => [...document.querySelectorAll('*')]
			.filter((e) => [...e.attributes].some((a) => /^on/i.test(a.name))).length);
		check('hostile names: nothing ran (no dialog, no global set, no error)',
			pwned === undefined && dialogs.length === 0 && errors.length === 0, `${pwned} ${dialogs} ${errors}`);
		check('hostile names: no script or event handler came from the data', scripts === 2 && handlers === 0,
			`${scripts} scripts, ${handlers} handlers`);
		const found = await page.evaluate((names) => names.map((n) => spflame.api.find(n)), evilNames);
		check('hostile names: every name is a frame, as text', found.every((i) => i > 0), JSON.stringify(found));
		const labels = await page.evaluate(() => [...document.querySelectorAll('#frames text')].map((e) => e.textContent));
		check('hostile names: labels show the names literally',
			evilNames.every((n) => labels.some((l) => l === n || (l.endsWith('..') && n.startsWith(l.slice(0, -2))))),
			JSON.stringify(labels));
		const title = await text('title');
		check('hostile title: shown as text', title === '<script>window.__pwned=8</script> & "t"', title);
		const bad = await page.evaluate(() => spflame.api.find('nul\\x00esc\\x1b[31mred\\xadsoft\\xff\\xfe'));
		check('bytes invalid in XML or UTF-8 are shown as \\xHH', bad > 0, String(bad));
		r = await rectOf(found[0]);
		await page.mouse.move(r.x, r.y);
		const det2 = await text('details');
		check('hostile --nametype and --countname: text in the details line',
			det2.startsWith('</text><script>window.__pwned=9</script> <script>window.__pwned=1</script> (10 <i>units</i>,'), det2);
	} catch (e) {
		notok('browser run', e.stack.split('\n').slice(0, 3).join(' | '));
	} finally {
		await ctx.close();
		fs.rmSync(tmp, { recursive: true, force: true });
	}
	process.exitCode = t.failed ? 1 : 0;
})();
