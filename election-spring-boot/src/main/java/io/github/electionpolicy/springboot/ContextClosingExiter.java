package io.github.electionpolicy.springboot;

import io.github.electionpolicy.fabric8.Exiter;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.SpringApplication;
import org.springframework.context.ApplicationContext;

/**
 * The {@link Exiter} of {@code election.loss-policy=exit}: closes the application context, then ends the
 * process through the application's {@link Exiter} bean ({@link Exiter#system()} unless it defines one).
 *
 * <p>Why not {@code System.exit} alone: it would close the context from Spring Boot's shutdown hook, and the
 * runner's {@code close()} would then run inside a hook (it is safe there, but nothing of the application may
 * call {@code System.exit} from one: that blocks for ever); with the hook turned off
 * ({@code spring.main.register-shutdown-hook=false}) nothing would close the context at all. So the context is
 * closed first, with {@link SpringApplication#exit}, and only then is the process ended, with the loss's
 * status (an application's {@link org.springframework.boot.ExitCodeGenerator}s do not change it: the loss's
 * generator comes first).
 *
 * <p>Both steps run on a thread of their own ({@code election-exit}, not a daemon, so the JVM cannot end with
 * another status meanwhile): the runner calls an exiter on one of its own callback threads, and closing the
 * context must wait for the runner to stop, which a callback cannot do (its {@code close()} returns at once). Closing a context that is already closing (a loss during shutdown) waits for that close,
 * or returns at once when Spring takes the closing thread for stuck (it interrupts a thread blocked in a close;
 * the runner's {@code close()} ignores the interrupt and finishes); after a SIGTERM, {@link Exiter#system()} then
 * sees the JVM shutting down and does not call {@code System.exit}. Nothing here can deadlock a Spring shutdown. A bean that fails to close (an exception or
 * an {@link Error} from its destroy method, user code) is logged and the process exits all the same: the exit
 * is what ends whatever work is left.
 *
 * <p>Thread-safe.
 */
final class ContextClosingExiter implements Exiter {

  private static final Logger LOG = LoggerFactory.getLogger(ContextClosingExiter.class);

  private final ApplicationContext context;
  private final Exiter processExiter;

  ContextClosingExiter(ApplicationContext context, Exiter processExiter) {
    this.context = Objects.requireNonNull(context, "context");
    this.processExiter = Objects.requireNonNull(processExiter, "processExiter");
  }

  @Override
  public void exit(int status) {
    Thread exiting = new Thread(() -> closeThenExit(status), "election-exit");
    exiting.setDaemon(false);
    exiting.start();
  }

  private void closeThenExit(int status) {
    try {
      LOG.warn("Lost the leader Lease: closing the application context, then exiting with status {}", status);
      SpringApplication.exit(context, () -> status);
    } catch (RuntimeException | Error e) {
      // A bean failing to close must not keep the process alive: the exit is what ends any work left.
      LOG.error("Closing the application context after the loss failed; exiting anyway", e);
    } finally {
      processExiter.exit(status);
    }
  }

  @Override
  public String toString() {
    return "ContextClosingExiter{then " + processExiter + "}";
  }
}
