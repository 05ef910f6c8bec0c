/** Wire-format helpers of the simulator: datetimes and the service's sentinel dates (money: engine/money.ts). */

/** Expiry written on permanent violations: they never lapse. */
export const NEVER = Date.UTC(2099, 11, 31);

/** The datetime the service writes for "no date" where the wire field is not nullable. */
export const NO_DATE = Date.parse('0001-01-01T00:00:00Z');

export function iso(t: number): string {
  return new Date(t).toISOString();
}

export function ok(): { success: true; errorCode: 0; errorMessage: null } {
  return { success: true, errorCode: 0, errorMessage: null };
}

export function fail(
  errorCode: number,
  errorMessage: string | null,
): { success: false; errorCode: number; errorMessage: string | null } {
  return { success: false, errorCode, errorMessage };
}
