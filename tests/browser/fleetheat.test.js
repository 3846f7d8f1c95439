#!/usr/bin/env node
// psvg --heatmap=hosts in Debian's headless Chromium (playwright-core), on
// a heat map of a real store (tests/cmd/t3231-pfleet-heatmap.sh):
//
//   node tests/browser/fleetheat.test.js SVG HOST_A HOST_B COL_A COL_B WANT_FOLDED LABEL
//
// Clicks the cell (HOST_A, column COL_A), then (HOST_B, COL_B): the cells
// of that rectangle are outlined, and the flame graph drawn below holds
// exactly the stacks of that slice -- its folded text equals WANT_FOLDED
// (pfleet get --by host of those hosts and minutes, through pfold).  LABEL
// is what the details line must say of the range.  Then: a cell's tooltip
// line, zoom by clicking a host's frame, Esc, no script errors.  No fixed
// waits: every step waits for what it needs (a loaded machine is slow, not
// wrong).  Prints "ok - ...", "not ok - ..." or "skip - ... # why" lines.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');

const [svgFile, hostA, hostB, colA, colB, wantFile, label] = process.argv.slice(2);
const { launch, needPlaywright, tap } = require('./chromium');
needPlaywright('fleet heat map browser tests');
const t = tap('fleet heat map browser');
const { ok, notok, check } = t;
const want = fs.readFileSync(wantFile, 'utf8').split('\n').filter((l) => l).sort();

(async () => {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fleetheat-browser-'));
	const ctx = await launch(dir, { width: 1200, height: 900 });
	ctx.setDefaultTimeout(120000);
	const page = await ctx.newPage();
	const errors = [];
	page.on('pageerror', (e) => errors.push(String(e)));
	page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
	await page.goto('file://' + path.resolve(svgFile));
	await page.waitForFunction(() => window.spheat && window.spheat.api, null, { timeout: 120000 });
	const st0 = await page.evaluate(() => spheat.api.state());
	const rowNames = await page.evaluate(() => spheat.rowNames);
	check(`the map is the hosts map, a row per host (${rowNames.join(', ')})`, st0.mode === 'hosts' && st0.rows === rowNames.length,
		JSON.stringify(st0));
	const ra = rowNames.indexOf(hostA), rb = rowNames.indexOf(hostB);
	const cell = (r, c) => page.locator('#cells rect').nth(+c * st0.rows + r);
	await cell(ra, colA).click();
	await cell(rb, colB).click();
	const st = await page.evaluate(() => spheat.api.state());
	const nsel = await page.evaluate(() => document.querySelectorAll('#cells rect.sel').length);
	const wantSel = (Math.abs(rb - ra) + 1) * (Math.abs(+colB - +colA) + 1);
	check(`two clicks select the rectangle of ${hostA} .. ${hostB} x columns ${colA} .. ${colB}: ${nsel} cells outlined`,
		nsel === wantSel, `${nsel}, want ${wantSel}`);
	const got = (await page.evaluate(() => spheat.api.folded())).sort();
	const same = got.length === want.length && got.every((l, i) => l === want[i]);
	let why = '';
	if (!same) {
		const g = new Set(got), w = new Set(want);
		why = `${got.length} stacks, want ${want.length}; only drawn: ${got.filter((l) => !w.has(l)).slice(0, 3).join(' | ')}; ` +
			`only wanted: ${want.filter((l) => !g.has(l)).slice(0, 3).join(' | ')}`;
	}
	check(`the flame graph holds exactly that slice's ${want.length} stacks (= pfleet get --by host of those hosts and minutes | pfold)`,
		same, why);
	check(`the details line names the range: "${st.details}"`, st.details.startsWith('Range ' + label + ': '), st.details);
	check('the graph is drawn', st.drawn > 3 && st.total > 0, JSON.stringify(st));
	// a cell's line on hover
	const box0 = await cell(0, 0).boundingBox();
	await page.mouse.move(box0.x + box0.width / 2, box0.y + box0.height / 2);
	const hover = await page.evaluate(() => spheat.api.state().details);
	const c0 = await page.evaluate(() => spheat.api.cellName(0) + ': ');
	check(`hovering the first cell says its host, bucket and weight: "${hover}"`, hover.startsWith(c0) && c0.startsWith(rowNames[0] + ' '), c0);
	// zoom into hostB's frame in the graph (the whole document in view), Esc back
	await page.setViewportSize({ width: 1200, height: Math.ceil(await page.evaluate(() => spheat.api.state().height)) });
	const hb = await page.evaluate((h) => {
		for (const g of document.getElementById('flame').children) {
			const t = g.querySelector('text');
			if (t && t.textContent === h && g.getAttribute('class') !== 'dim') {
				const r = g.querySelector('rect').getBoundingClientRect();
				return { x: r.x + Math.min(r.width / 2, 50), y: r.y + r.height / 2 };
			}
		}
		return null;
	}, hostB);
	if (hb) {
		await page.mouse.click(hb.x, hb.y);
		const z = await page.evaluate(() => spheat.api.state());
		check(`a click on ${hostB}'s frame zooms to it`, z.zoomed > 0 && z.details.indexOf('zoomed to ' + hostB + ' (') >= 0, z.details);
		await page.keyboard.press('Escape');
		check('Esc resets the zoom', (await page.evaluate(() => spheat.api.state().zoomed)) === 0);
	} else notok(`${hostB}'s frame has a label to click`);
	check('no script errors', errors.length === 0, errors.join('; '));
	await ctx.close();
	fs.rmSync(dir, { recursive: true, force: true });
	process.exit(0);
})().catch((e) => { notok('browser run', String(e)); process.exit(0); });
