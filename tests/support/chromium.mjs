/**
 * How every test and benchmark launches Chromium: Debian's build (browsers cannot be downloaded
 * here), with the flags that keep it off the network and quiet in a sandbox-less container.
 */
export const CHROMIUM_LAUNCH_OPTIONS = {
  executablePath: '/usr/bin/chromium',
  args: [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ],
};
