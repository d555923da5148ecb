package io.github.electionpolicy.josdk;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.github.electionpolicy.fabric8.LeadershipTerm;
import io.github.electionpolicy.fabric8.Shards;
import io.github.electionpolicy.fabric8.TestTerms;
import java.lang.reflect.Proxy;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The write gate of a shard's term ({@code ShardedOperator.clientFor}): opened off a move's path (not while the shard
 * is taken), once per term however many threads ask at once, and closed with the shard's stop, including a gate that
 * was being opened while the stop ran. The gates here are stand-ins that count how often they were opened and closed:
 * what a gate refuses is {@code WriteGate}'s, tested with it.
 */
class ShardWriteGateLifecycleTest {

  private static final ConfigMap WIDGET = new ConfigMapBuilder().withNewMetadata().withName("w").withUid("uid-1")
      .endMetadata().build();

  private final List<KubernetesClient> opened = new CopyOnWriteArrayList<>();
  private final Set<KubernetesClient> closed = ConcurrentHashMap.newKeySet();
  private final BiFunction<KubernetesClient, LeadershipTerm, KubernetesClient> gates = (client, term) -> {
    KubernetesClient[] self = new KubernetesClient[1];
    self[0] = (KubernetesClient) Proxy.newProxyInstance(KubernetesClient.class.getClassLoader(),
        new Class<?>[] {KubernetesClient.class}, (proxy, method, args) -> switch (method.getName()) {
          case "close" -> {
            closed.add(self[0]);
            yield null;
          }
          case "hashCode" -> System.identityHashCode(proxy);
          case "equals" -> proxy == args[0];
          case "toString" -> "gate of " + term;
          default -> throw new UnsupportedOperationException(method.getName());
        });
    opened.add(self[0]);
    return self[0];
  };
  private final ShardOwnership ownership = new ShardOwnership(Shards.of(1), null, gates);
  private final ExecutorService threads = Executors.newFixedThreadPool(8);

  @AfterEach
  void stopThreads() {
    threads.shutdownNow();
  }

  @Test
  void takingAShardOpensNoGateAndTheFirstAskOpensTheOneItsTermKeeps() {
    LeadershipTerm term = TestTerms.valid("pod-a");
    ownership.own(0, term);
    assertThat(opened).as("gates opened as the shard was taken").isEmpty();

    KubernetesClient first = ownership.clientFor(WIDGET).orElseThrow();
    assertThat(ownership.clientFor(WIDGET)).containsSame(first);
    ownership.openGate(0, term);
    assertThat(opened).containsExactly(first);

    ownership.release(0);
    assertThat(ownership.clientFor(WIDGET)).isEmpty();
    assertThat(closed).containsExactly(first);
  }

  @Test
  void aGateOpenedForATermThatEndedIsNotKept() {
    LeadershipTerm before = TestTerms.valid("pod-a");
    ownership.own(0, before);
    ownership.release(0);
    ownership.openGate(0, before);
    assertThat(opened).isEmpty();

    LeadershipTerm now = TestTerms.valid("pod-a");
    ownership.own(0, now);
    ownership.openGate(0, before);
    assertThat(ownership.clientFor(WIDGET).orElseThrow()).hasToString("gate of " + now);
  }

  @Test
  void manyAtOnceGetOneGateAndEveryOtherOneOpenedIsClosed() throws Exception {
    for (int round = 0; round < 200; round++) {
      ownership.own(0, TestTerms.valid("pod-a"));
      CyclicBarrier together = new CyclicBarrier(8);
      List<Future<Optional<KubernetesClient>>> asks = new CopyOnWriteArrayList<>();
      for (int i = 0; i < 8; i++) {
        asks.add(threads.submit(() -> {
          together.await(10, TimeUnit.SECONDS);
          return ownership.clientFor(WIDGET);
        }));
      }
      KubernetesClient kept = asks.get(0).get(10, TimeUnit.SECONDS).orElseThrow();
      for (Future<Optional<KubernetesClient>> ask : asks) {
        assertThat(ask.get(10, TimeUnit.SECONDS)).as("round %d", round).containsSame(kept);
      }
      assertThat(opened.stream().filter(gate -> !closed.contains(gate))).as("round %d", round)
          .containsExactly(kept);
      ownership.release(0);
      assertThat(closed).as("round %d", round).containsAll(opened);
    }
  }

  @Test
  void aGateBeingOpenedAsItsShardStopsIsClosedAndNoneIsLeftOpen() throws Exception {
    for (int round = 0; round < 300; round++) {
      LeadershipTerm term = TestTerms.valid("pod-a");
      ownership.own(0, term);
      CyclicBarrier together = new CyclicBarrier(3);
      Future<Optional<KubernetesClient>> ask = threads.submit(() -> {
        together.await(10, TimeUnit.SECONDS);
        return ownership.clientFor(WIDGET);
      });
      Future<?> open = threads.submit(() -> {
        together.await(10, TimeUnit.SECONDS);
        ownership.openGate(0, term);
        return null;
      });
      Future<?> stop = threads.submit(() -> {
        together.await(10, TimeUnit.SECONDS);
        ownership.release(0);
        return null;
      });
      stop.get(10, TimeUnit.SECONDS);
      open.get(10, TimeUnit.SECONDS);
      ask.get(10, TimeUnit.SECONDS);
      assertThat(closed).as("round %d: every gate opened for the stopped term is closed", round)
          .containsAll(opened);
      assertThat(ownership.clientFor(WIDGET)).isEmpty();
    }
  }
}
