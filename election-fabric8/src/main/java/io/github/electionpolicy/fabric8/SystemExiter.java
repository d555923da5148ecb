package io.github.electionpolicy.fabric8;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** {@link Exiter#system()}: {@code System.exit} on its own thread, never from a shutdown in progress. */
enum SystemExiter implements Exiter {
  INSTANCE;

  private static final Logger LOG = LoggerFactory.getLogger(ElectionRunner.class);

  @Override
  public void exit(int status) {
    if (shutdownInProgress()) {
      LOG.info("Not calling System.exit({}): the JVM is already shutting down", status);
      return;
    }
    // Not a daemon: the JVM cannot end with another status while this thread is on its way to exit.
    Thread exiting = new Thread(() -> System.exit(status), "election-exit");
    exiting.setDaemon(false);
    exiting.start();
  }

  private static boolean shutdownInProgress() {
    Thread probe = new Thread(() -> { }, "election-shutdown-probe");
    try {
      Runtime.getRuntime().addShutdownHook(probe);
      Runtime.getRuntime().removeShutdownHook(probe);
      return false;
    } catch (IllegalStateException shuttingDown) {
      return true;
    }
  }
}
