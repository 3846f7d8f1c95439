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

module.exports = { CHROMIUM, launch };
