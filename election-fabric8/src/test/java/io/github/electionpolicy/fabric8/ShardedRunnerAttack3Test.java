package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.github.electionpolicy.testsupport.Await;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Findings of a third adversarial review of the sharded runner (h-attack12): each test shows a promise of the runner's
 * Javadoc, docs or CHANGELOG that it broke before the fix that came with the test, or, marked sound, a probe that
 * held.
 */
class ShardedRunnerAttack3Test {

  /** Answers a request its own way when {@link #fault} gives a response for it; else the fixture answers. */
  private final Faults faults = new Faults();

  @RegisterExtension
  final MockApi api = new MockApi(faults::around);

  private final List<ShardedRunner> runners = new ArrayList<>();
  private final Map<Integer, String> running = new ConcurrentHashMap<>();
  private final List<String> overlaps = new CopyOnWriteArrayList<>();

  @AfterEach
  void closeAll() {
    faults.clear();
    runners.forEach(ShardedRunner::close);
  }

  /** Injected answers: the first rule that answers a request wins. */
  static final class Faults {
    private final List<Function<RecordedRequest, MockResponse>> rules = new CopyOnWriteArrayList<>();

    Dispatcher around(Dispatcher delegate) {
      return new Dispatcher() {
        @Override
        public MockResponse dispatch(RecordedRequest request) {
          for (Function<RecordedRequest, MockResponse> rule : rules) {
            MockResponse response = rule.apply(request);
            if (response != null) {
              return response;
            }
          }
          return delegate.dispatch(request);
        }
      };
    }

    void add(Function<RecordedRequest, MockResponse> rule) {
      rules.add(rule);
    }

    void clear() {
      rules.clear();
    }
  }

  static String path(RecordedRequest request) {
    return request.getPath() == null ? "" : request.getPath();
  }

  static MockResponse status(int code, String reason) {
    return new MockResponse().setResponseCode(code).setHeader("Content-Type", "application/json")
        .setBody("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"reason\":\"" + reason
            + "\",\"code\":" + code + "}");
  }

  private void started(int shard, String identity) {
    String before = running.putIfAbsent(shard, identity);
    if (before != null) {
      overlaps.add("shard " + shard + " started in " + identity + " while running in " + before);
    }
  }

  private ShardedRunner replica(String identity, int shards) {
    ShardedRunner runner = ShardedRunner.builder()
        .client(api.client())
        .decision(MockApi.CONTEND)
        .settings(MockApi.fastSettings(identity).build())
        .shards(shards)
        .service(ShardService.of((shard, term) -> started(shard, identity), shard -> running.remove(shard, identity)))
        .start();
    runners.add(runner);
    return runner;
  }

  static String shardLease(int shard) {
    return MockApi.LEASE + "-shard-" + shard;
  }

  static String memberLease(String identity) {
    return MockApi.LEASE + "-member-" + identity;
  }

  /**
   * A shard Lease the list and watch showed released is taken with the first request, without a read (e576abb); the
   * transport then has no Lease it saw, and its write is the bare record: a PUT replaces the object, so the labels,
   * annotations and owner references a user put on the shard's Lease are gone, which the CHANGELOG promises a write
   * keeps ("a write keeps every field of the Lease as it was read").
   */
  @Test
  void takingAShardLeaseSeenReleasedKeepsItsMetadata() {
    Lease released = new LeaseBuilder()
        .withNewMetadata()
        .withName(shardLease(0))
        .withNamespace(MockApi.NAMESPACE)
        .addToLabels(ShardLeases.LABEL, MockApi.LEASE)
        .addToLabels("team", "orders")
        .addToAnnotations("example.com/owner", "orders-team")
        .withOwnerReferences(new OwnerReferenceBuilder().withApiVersion("apps/v1").withKind("Deployment")
            .withName("orders-controller").withUid("0f4d5b8e-1111-2222-3333-444455556666").build())
        .endMetadata()
        .withNewSpec()
        .withHolderIdentity("")
        .withLeaseDurationSeconds(1)
        .withLeaseTransitions(3)
        .endSpec()
        .build();
    api.client().leases().inNamespace(MockApi.NAMESPACE).resource(released).create();

    ShardedRunner a = replica("pod-a", 1);
    Await.until("pod-a owns shard 0", () -> a.ownedShards().containsKey(0), a::toString);

    Lease taken = api.fixture.lease(shardLease(0)).orElseThrow();
    assertThat(taken.getSpec().getHolderIdentity()).isEqualTo("pod-a");
    assertThat(taken.getMetadata().getLabels()).containsEntry("team", "orders")
        .containsEntry(ShardLeases.LABEL, MockApi.LEASE);
    assertThat(taken.getMetadata().getAnnotations()).containsEntry("example.com/owner", "orders-team");
    assertThat(taken.getMetadata().getOwnerReferences()).hasSize(1);
  }
}
