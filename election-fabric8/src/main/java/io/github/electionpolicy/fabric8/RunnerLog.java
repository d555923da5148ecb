package io.github.electionpolicy.fabric8;

import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;
import org.slf4j.helpers.FormattingTuple;
import org.slf4j.helpers.MessageFormatter;

/**
 * The log lines of one runner, under one SLF4J logger, written anywhere but on the {@link RunnerLoop}: the loop
 * is shared by every runner of the JVM, so an appender that is slow for one runner's lines (a blocked stderr
 * pipe, a remote appender) would stall the renewals of all the others. A line logged on the loop is formatted
 * there and handed to the runner's {@link Lane}, which writes it on the callback pool, in order; a line logged
 * on any other thread (a service callback, the caller of {@code start()}) is written there and then, unless
 * lines of the runner still wait on the lane, in which case it waits behind them so the runner's lines keep
 * their order. The text and level of every line are those the caller asked for.
 *
 * <p>Thread-safe.
 */
final class RunnerLog {

  private final Logger logger;
  private final Lane lane;

  /** Lines of {@code source}'s logger, through {@code lane}. */
  RunnerLog(Class<?> source, Lane lane) {
    this.logger = LoggerFactory.getLogger(source);
    this.lane = lane;
  }

  void debug(String format, Object... args) {
    lane.log(logger, Level.DEBUG, format, args);
  }

  void info(String format, Object... args) {
    lane.log(logger, Level.INFO, format, args);
  }

  void warn(String format, Object... args) {
    lane.log(logger, Level.WARN, format, args);
  }

  void error(String format, Object... args) {
    lane.log(logger, Level.ERROR, format, args);
  }

  /**
   * Writes an ERROR line about a failure, on the calling thread, whatever writing it throws (a user exception whose
   * message or stack trace throws, an {@link OutOfMemoryError} in the appender): the line about a failure must never
   * keep the safety action after it (the next service's stop, the report to the loop, the next task of a lane)
   * from happening. Falls back to the line without the stack trace, then to no line.
   */
  static void errorSafely(Logger logger, String format, Object... args) {
    try {
      if (!logger.isErrorEnabled()) {
        return;
      }
      FormattingTuple line = MessageFormatter.arrayFormat(format, args);
      Lane.write(logger, Level.ERROR, line.getMessage(), line.getThrowable());
    } catch (Throwable e) {
      // Lane.write fell back already; a failure before it (the logger itself) leaves no line.
    }
  }

  /** The levels the runner logs at (SLF4J 1.7's Logger has no level type). */
  enum Level {
    DEBUG, INFO, WARN, ERROR
  }

  /**
   * One runner's serial log lane: a {@link CallbackLane} on the shared callback pool, so one runner's lines are
   * written one at a time and in order, and a runner costs no thread of its own (a pool thread carries the name
   * {@code election-log[lease:identity]} only while it writes). The lane is bounded: at most {@link #LIMIT}
   * lines wait at once. Past that (an appender that has fallen that far behind, or blocks for good) a line is
   * dropped and counted rather than held, so a stuck appender cannot grow the heap without bound; one WARN
   * line, queued behind the waiting ones, then says how many were dropped. Lines the pool refuses (no thread could
   * be started) are kept, in order, and handed over again by the next line or by whoever waits for them.
   */
  static final class Lane {

    /** The most lines of one runner that wait to be written at once. */
    static final int LIMIT = 1_000;

    /** How often a waiter hands refused lines over again (see {@link #awaitWritten}). */
    private static final long RETRY_NANOS = java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(10);

    private static final Logger SUMMARY = LoggerFactory.getLogger(ElectionRunner.class);

    private final RunnerLoop loop;
    private final CallbackLane lane;
    private final String tag;
    private final AtomicInteger waiting = new AtomicInteger();
    private final AtomicLong dropped = new AtomicLong();
    private final AtomicLong droppedUnreported = new AtomicLong();
    private final AtomicBoolean summaryWaiting = new AtomicBoolean();
    // While held (start(): the caller writes its start-up lines after the runner began), the runner's lines wait
    // here, in order, and are handed over on release, before any line logged after it. Guarded by this.
    private volatile boolean held;
    private java.util.List<Runnable> heldLines = new java.util.ArrayList<>();

    /**
     * @param executor where the lines are written: {@link RunnerLoop#logWriter()}
     * @param tag names the runner in the lane's thread name and the summary line
     */
    Lane(RunnerLoop loop, Executor executor, String tag) {
      this.loop = loop;
      this.tag = tag;
      this.lane = new CallbackLane(executor, "election-log[" + tag + "]", this);
    }

    /** How many lines were dropped because {@link #LIMIT} lines already waited; for tests and reports. */
    long dropped() {
      return dropped.get();
    }

    /**
     * Waits until every line handed over before this call was written, at most {@code timeoutNanos}
     * ({@code Long.MAX_VALUE}: for ever).
     */
    boolean awaitWritten(long timeoutNanos) throws InterruptedException {
      // Lines the pool refused are handed over again by the runner's next line; a runner's last lines have none,
      // so whoever waits for them (close(), awaitStopped(), the exiter) hands the lane over again itself, every
      // RETRY_NANOS while the pool refuses, instead of waiting its whole bound for lines nobody hands over.
      boolean forever = timeoutNanos == Long.MAX_VALUE;
      long deadline = System.nanoTime() + (forever ? 0 : timeoutNanos);
      while (true) {
        if (lane.refused()) {
          lane.retry();
        }
        long left = forever ? Long.MAX_VALUE : deadline - System.nanoTime();
        if (!lane.refused()) {
          return lane.awaitIdle(left);
        }
        if (left <= 0) {
          return false;
        }
        if (lane.awaitIdle(Math.min(left, RETRY_NANOS))) {
          return true;
        }
      }
    }

    /**
     * Holds the runner's lines until {@link #release()}: the caller's lines written meanwhile come before them.
     * Only before the runner starts.
     */
    synchronized void hold() {
      held = true;
    }

    /** Hands the lines held since {@link #hold()} over, in order, before any line logged after this call. */
    synchronized void release() {
      java.util.List<Runnable> lines = heldLines;
      heldLines = new java.util.ArrayList<>();
      for (Runnable line : lines) {
        hand(line);
      }
      held = false;
    }

    void log(Logger logger, Level level, String format, Object[] args) {
      if (!enabled(logger, level)) {
        return;
      }
      if (held && holdLine(logger, level, format, args)) {
        return;
      }
      if (!loop.inLoop() && !lane.busy()) {
        // Not on the loop, and nothing of this runner waits to be written: the caller's thread may wait for
        // its appender, as it would without the library.
        FormattingTuple line = MessageFormatter.arrayFormat(format, args);
        write(logger, level, line.getMessage(), line.getThrowable());
        return;
      }
      hand(formatted(logger, level, format, args));
    }

    private synchronized boolean holdLine(Logger logger, Level level, String format, Object[] args) {
      if (!held) {
        return false; // released meanwhile: the line goes the usual way, after the held ones
      }
      heldLines.add(formatted(logger, level, format, args));
      return true;
    }

    /**
     * The write of a line, formatted now, so the line says what was true when it was logged, not when the lane got
     * to it; and with the context (MDC) of the thread that logged it, not of the pool thread that writes it.
     */
    private static Runnable formatted(Logger logger, Level level, String format, Object[] args) {
      FormattingTuple line = MessageFormatter.arrayFormat(format, args);
      Map<String, String> context = MDC.getCopyOfContextMap();
      return () -> writeWith(context, logger, level, line.getMessage(), line.getThrowable());
    }

    private void hand(Runnable write) {
      if (waiting.incrementAndGet() > LIMIT) {
        waiting.decrementAndGet();
        drop();
        return;
      }
      if (lane.refused()) {
        lane.retry(); // a thread may be had again: the lines kept since are written first, in order
      }
      // If the pool refuses (no thread can be started), the line stays queued, in order and counted against
      // LIMIT, and a later line hands the lane over again: never the runner's step that logged it fails.
      lane.submit(() -> {
        waiting.decrementAndGet();
        write.run();
      });
    }

    private void drop() {
      dropped.incrementAndGet();
      droppedUnreported.incrementAndGet();
      if (!summaryWaiting.compareAndSet(false, true)) {
        return; // one summary already waits: it counts this line too
      }
      // Past the limit on purpose (by one line): it is the only line that says others were lost.
      lane.submit(() -> {
        summaryWaiting.set(false);
        long lost = droppedUnreported.getAndSet(0);
        if (lost > 0) {
          writeWith(null, SUMMARY, Level.WARN, "Dropped " + lost + " log line(s) of the runner " + tag
              + ": more than " + LIMIT + " waited for a slow log appender", null);
        }
      });
    }

    private static void writeWith(Map<String, String> context, Logger logger, Level level, String message,
        Throwable failure) {
      Map<String, String> own = MDC.getCopyOfContextMap();
      setContext(context);
      try {
        write(logger, level, message, failure);
      } finally {
        setContext(own);
      }
    }

    private static void setContext(Map<String, String> context) {
      if (context == null || context.isEmpty()) {
        MDC.clear();
      } else {
        MDC.setContextMap(context);
      }
    }

    private static boolean enabled(Logger logger, Level level) {
      switch (level) {
        case DEBUG:
          return logger.isDebugEnabled();
        case INFO:
          return logger.isInfoEnabled();
        case WARN:
          return logger.isWarnEnabled();
        default:
          return logger.isErrorEnabled();
      }
    }

    /**
     * Writes a formatted line: passed without arguments, no brace in the message is a placeholder again. Never
     * throws: if writing the failure's stack trace throws, the line is written without it, naming only the
     * failure's class; if that throws too, the line is lost, never the lane it is written on (see
     * {@link RunnerLog#errorSafely}).
     */
    static void write(Logger logger, Level level, String message, Throwable failure) {
      try {
        writeAsIs(logger, level, message, failure);
      } catch (Throwable e) {
        try {
          writeAsIs(logger, level, failure == null ? message + " (the line could not be written whole)"
              : message + " (" + failure.getClass().getName() + ", whose stack trace could not be written)", null);
        } catch (Throwable again) {
          // Lost: the appender cannot write at all.
        }
      }
    }

    private static void writeAsIs(Logger logger, Level level, String message, Throwable failure) {
      switch (level) {
        case DEBUG -> {
          if (failure == null) {
            logger.debug(message);
          } else {
            logger.debug(message, failure);
          }
        }
        case INFO -> {
          if (failure == null) {
            logger.info(message);
          } else {
            logger.info(message, failure);
          }
        }
        case WARN -> {
          if (failure == null) {
            logger.warn(message);
          } else {
            logger.warn(message, failure);
          }
        }
        case ERROR -> {
          if (failure == null) {
            logger.error(message);
          } else {
            logger.error(message, failure);
          }
        }
        default -> throw new IllegalStateException("unknown level " + level);
      }
    }
  }
}
