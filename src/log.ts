export type LogLevel = "debug" | "info" | "warn" | "error";
const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** Fields a log line may carry. Request and response bodies are never among them. */
export interface LogFields {
  request_id?: string;
  key_id?: string;
  account_id?: string;
  fn?: string;
  method?: string;
  path?: string;
  status?: number;
  ms?: number;
  provider?: string;
  credits?: number;
  cached?: boolean;
  error_code?: string;
  [extra: string]: string | number | boolean | undefined | null;
}

export interface Logger {
  level: LogLevel;
  log(level: LogLevel, msg: string, fields?: LogFields): void;
}

/** True when `level` would be written: lets hot paths skip building a line nobody reads. */
export function logsAt(logger: Logger, level: LogLevel): boolean {
  return ORDER[level] >= ORDER[logger.level];
}

/** JSON lines on stderr. */
export function createLogger(level: LogLevel, sink: (line: string) => void = (l) => process.stderr.write(`${l}\n`)): Logger {
  return {
    level,
    log(lvl, msg, fields) {
      if (ORDER[lvl] < ORDER[this.level]) return;
      sink(JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...fields }));
    },
  };
}
