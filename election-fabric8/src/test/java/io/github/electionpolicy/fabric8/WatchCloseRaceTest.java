package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.testsupport.Await;
import java.time.Duration;
import java.util.AbstractSet;
import java.util.Iterator;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Finding 3 (h-attack6): a watch whose open starts while its transport closes is left open, reconnecting, after
 * the close, and reports events to a runner that closed its transport.
 *
 * <p><b>The bug.</b> {@code LeaseWatch.open} reads the transport's {@code closed} and then adds its call to the
 * transport's {@code inFlight}: check, then act. {@code Fabric8LeaseTransport.close()} sets {@code closed},
 * cancels what {@code inFlight} holds, then clears it. A close that runs between the watch's check and its add
 * (the loop opens the follower's watch while another thread closes the runner: {@code close()} from a user's
 * thread, a shutdown hook) cancels every call but this one, which is added after (or cleared with the others
 * without being cancelled): the open goes on, with {@code submitWatch} on the hand-over thread, and the watch
 * stays open, reconnecting for ever ({@code watchReconnectLimit(-1)}), with nothing left to close it. The class
 * says "no watch opens once its {@code closed} is set". The blocking open had the same window; the non-blocking
 * one (rewritten today) keeps it, and its hand-over task checks only the call's own {@code over}, not
 * {@code closed}.
 *
 * <p><b>The scenario.</b> Deterministic: the transport's {@code inFlight} set runs the transport's close (set
 * {@code closed}, cancel every call it holds, clear) just before the watch's call is added, which is exactly that
 * interleaving; the hand-over runs inline. After it the set holds an uncancelled call, and the watch opens.
 *
 * <p><b>Suggested fix.</b> Read {@code closed} again after {@code inFlight.add(call)} and cancel the call if it is
 * set (close sets {@code closed} before it reads {@code inFlight}, so either the close sees the call or the open
 * sees the close); the hand-over task may also read {@code closed}. {@code LeaseHttp} and the preflight share the
 * pattern.
 */
class WatchCloseRaceTest {

  @RegisterExtension
  final MockApi api = new MockApi().answeringAccessReviews();

  /** The transport's {@code inFlight}, whose first add lets the transport's close run first. */
  private static final class CloseBeforeFirstAdd extends AbstractSet<LeaseTransport.Call> {
    private final Set<LeaseTransport.Call> calls = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean closed;
    private final AtomicBoolean armed = new AtomicBoolean(true);

    CloseBeforeFirstAdd(AtomicBoolean closed) {
      this.closed = closed;
    }

    @Override
    public boolean add(LeaseTransport.Call call) {
      if (armed.compareAndSet(true, false)) {
        // Fabric8LeaseTransport.close(), as it is, on "another thread" at this very point.
        closed.set(true);
        for (LeaseTransport.Call other : calls.toArray(new LeaseTransport.Call[0])) {
          other.cancel();
        }
        calls.clear();
      }
      return calls.add(call);
    }

    @Override
    public boolean remove(Object call) {
      return calls.remove(call);
    }

    @Override
    public Iterator<LeaseTransport.Call> iterator() {
      return calls.iterator();
    }

    @Override
    public int size() {
      return calls.size();
    }
  }

  @Test
  void aWatchWhoseOpenRacesTheTransportsCloseIsNotLeftOpen() throws Exception {
    AtomicBoolean closed = new AtomicBoolean();
    CloseBeforeFirstAdd inFlight = new CloseBeforeFirstAdd(closed);
    SharedPools.InFlight requests = new SharedPools.InFlight(64, "Lease calls");
    LeaseWatch watches = new LeaseWatch(api.client(), MockApi.NAMESPACE, MockApi.LEASE, SharedPools.io(),
        Runnable::run, requests, closed, inFlight, true);
    CompletableFuture<Void> opened = new CompletableFuture<>();
    LeaseTransport.Call call = watches.open(new LeaseTransport.WatchEvents() {
      @Override
      public void opened() {
        opened.complete(null);
      }

      @Override
      public void changed(LeaseRecord record) {}

      @Override
      public void closed() {}
    });
    try {
      assertThat(closed).as("the transport closed while the watch opened").isTrue();
      assertThat(inFlight).as("after the close, no call of the transport is left uncancelled").isEmpty();
      assertThat(Await.holds(opened::isDone, Duration.ofSeconds(3)))
          .as("no watch opens once the transport is closed").isFalse();
    } finally {
      call.cancel(); // what nothing does in production: the transport is closed
      Await.holds(() -> requests.inFlight() == 0, Duration.ofSeconds(20));
    }
  }
}
