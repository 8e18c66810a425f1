/** Number formatting shared by the report's tables and lines (report.ts, mgmt-report.ts). */

/** A share of one core (0.25) as a percentage with one decimal (25), the same in the targets and the tables. */
export const corePercent = (share: number): number => Math.round(share * 1000) / 10;
export const fmt = (n: number | undefined, digits = 0): string =>
  n === undefined ? '–' : n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
export const percent = (share: number | undefined): string =>
  share === undefined ? '–' : `${Math.round(share * 100)} %`;
export const mib = (bytes: number | undefined): string => (bytes === undefined ? '–' : `${fmt(bytes / 1_048_576, 1)}`);
