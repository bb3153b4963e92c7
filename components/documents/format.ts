/** "1.4 MB"-style sizes for people (decimal units, as file managers show them). */
export function formatBytes(bytes: number | null): string {
  if (bytes === null) return "—";
  if (bytes < 1000) return `${bytes} B`;
  const units = ["kB", "MB", "GB"];
  let value = bytes / 1000;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}
