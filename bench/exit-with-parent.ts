// Bench servers are child processes; if the bench dies without stopping them (Ctrl-C, a crash),
// they notice they were re-parented and exit instead of lingering on their port.
export function exitWithParent(): void {
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) process.exit(0);
  }, 500).unref();
}
