// chromium.js — how the browser tests and the screenshot scripts start
// Debian's Chromium through playwright-core: headless, no sandbox (CI runs
// as root), nothing fetched from the network, the profile in a directory
// the caller made and removes.
const CHROMIUM = process.env.SP_CHROMIUM || '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
	'--disable-component-update', '--disable-sync', '--no-first-run'];

// launch(dir, viewport): a persistent context whose profile is in dir.
function launch(dir, viewport) {
	const { chromium } = require('playwright-core');
	return chromium.launchPersistentContext(dir, { executablePath: CHROMIUM, headless: true, viewport, args: ARGS });
}

// needPlaywright(what): a skip line naming what, and exit, when
// playwright-core is not installed.
function needPlaywright(what) {
	try {
		require.resolve('playwright-core');
	} catch (e) {
		console.log(`skip - ${what} # playwright-core is not installed (make deps runs npm install in tests/browser)`);
		process.exit(0);
	}
}

// tap(label): ok/notok/check printing "ok - LABEL: NAME" and
// "not ok - LABEL: NAME (WHY)" lines; t.failed counts the failures.
function tap(label) {
	const t = { failed: 0 };
	t.ok = (name) => console.log(`ok - ${label}: ${name}`);
	t.notok = (name, why) => {
		t.failed++;
		console.log(`not ok - ${label}: ${name}${why ? ` (${why})` : ''}`);
	};
	t.check = (name, cond, why) => (cond ? t.ok(name) : t.notok(name, why));
	return t;
}

module.exports = { CHROMIUM, launch, needPlaywright, tap };
