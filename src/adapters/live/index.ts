/** `tickline/live`: a paper or live trading session on a gateway account, its journal and the kill switch. */
export {
  liveConfigSchema,
  pollSchema,
  credentialsFromEnv,
  CredentialsError,
  type Credentials,
  type LiveConfig,
} from './live-config.ts';
export {
  notifyConfigSchema,
  notifyTargetSchema,
  NOTIFY_EVENTS,
  type NotifyConfig,
  type NotifyEvent,
  type NotifyTarget,
} from './notify-config.ts';
export { LiveSession, SessionError, type SessionOptions } from './trading-session.ts';
export {
  Journal,
  JournalError,
  formatTag,
  parseTag,
  type JournalEntry,
  type JournaledFill,
  type JournaledOrder,
} from './journal.ts';
export { flattenAccount, flattenText, type FlattenResult, type KillSource } from './kill-switch.ts';
export { reconcileOnStart, type ReconcileReport } from './reconcile.ts';
