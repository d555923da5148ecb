package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectAccessReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewStatus;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import io.fabric8.mockwebserver.http.RecordedRequest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code docs/deploy/rbac.yaml} grants exactly what the adapter uses and what its preflight checks: no verb more,
 * none less (on leases, and {@code create} on events for the leadership Events), and every verb that RBAC can
 * scope to a name is scoped to the Lease. {@code docs/sharding-rbac.yaml} does the same for a {@link ShardedRunner},
 * whose one rule on leases cannot name them.
 */
class RbacManifestTest {

  @RegisterExtension
  final MockApi api = new MockApi();

  private static final Path MANIFEST =
      Path.of(System.getProperty("basedir", ".")).resolve("../docs/deploy/rbac.yaml").normalize();

  private List<HasMetadata> manifest() throws Exception {
    try (InputStream in = Files.newInputStream(MANIFEST)) {
      return api.client().load(in).items();
    }
  }

  private Role role() throws Exception {
    return manifest().stream().filter(Role.class::isInstance).map(Role.class::cast).findFirst().orElseThrow();
  }

  /** What the rules grant, as {@code resource:verb}. */
  private static Set<String> verbs(List<PolicyRule> rules) {
    return rules.stream().flatMap(rule -> rule.getResources().stream()
            .flatMap(resource -> rule.getVerbs().stream().map(verb -> resource + ":" + verb)))
        .collect(Collectors.toCollection(TreeSet::new));
  }

  @Test
  void manifestHoldsARoleOnLeasesAndEventCreationOnlyAndABindingToIt() throws Exception {
    Role role = role();
    RoleBinding binding = manifest().stream().filter(RoleBinding.class::isInstance)
        .map(RoleBinding.class::cast).findFirst().orElseThrow();

    assertThat(role.getRules()).allSatisfy(rule -> {
      if (rule.getResources().contains("events")) {
        assertThat(rule.getApiGroups()).containsExactly("");
        assertThat(rule.getResources()).containsExactly("events");
        assertThat(rule.getVerbs()).isEqualTo(LeaseAccess.EVENT_VERBS);
      } else {
        assertThat(rule.getApiGroups()).containsExactly("coordination.k8s.io");
        assertThat(rule.getResources()).containsExactly("leases");
      }
    });
    assertThat(role.getRules()).filteredOn(rule -> rule.getResources().contains("events")).hasSize(1);
    assertThat(binding.getRoleRef().getName()).isEqualTo(role.getMetadata().getName());
    assertThat(binding.getMetadata().getNamespace()).isEqualTo(role.getMetadata().getNamespace());
  }

  /** Applied to a fresh namespace, nothing is missing: the account the binding names is in the manifest. */
  @Test
  void theBindingsSubjectIsTheManifestsOwnServiceAccount() throws Exception {
    ServiceAccount account = manifest().stream().filter(ServiceAccount.class::isInstance)
        .map(ServiceAccount.class::cast).findFirst().orElseThrow();
    RoleBinding binding = manifest().stream().filter(RoleBinding.class::isInstance)
        .map(RoleBinding.class::cast).findFirst().orElseThrow();

    assertThat(binding.getSubjects()).singleElement().satisfies(subject -> {
      assertThat(subject.getKind()).isEqualTo("ServiceAccount");
      assertThat(subject.getName()).isEqualTo(account.getMetadata().getName());
      assertThat(subject.getNamespace()).isEqualTo(account.getMetadata().getNamespace());
    });
    assertThat(manifest()).extracting(HasMetadata::getKind)
        .containsExactly("ServiceAccount", "Role", "RoleBinding");
  }

  @Test
  void everyVerbButCreateIsScopedToTheLeaseName() throws Exception {
    assertThat(role().getRules()).allSatisfy(rule -> {
      if (rule.getVerbs().contains("create")) {
        assertThat(rule.getVerbs()).as("create cannot be restricted by name, so it stands alone")
            .containsExactly("create");
        assertThat(rule.getResourceNames()).isNullOrEmpty();
      } else {
        assertThat(rule.getResourceNames()).containsExactly(MockApi.LEASE);
      }
    });
  }

  @Test
  void roleShownInTheAccessDeniedErrorHasTheManifestsRules() throws Exception {
    String shown = LeaseAccess.roleYaml(MockApi.NAMESPACE, MockApi.LEASE);
    Role role;
    try (InputStream in = new java.io.ByteArrayInputStream(shown.getBytes(StandardCharsets.UTF_8))) {
      role = Serialization.unmarshal(in, Role.class);
    }

    assertThat(role.getRules()).isEqualTo(role().getRules());
    assertThat(role.getMetadata().getNamespace()).isEqualTo(MockApi.NAMESPACE);
  }

  @Test
  void manifestGrantsExactlyTheVerbsThePreflightChecks() throws Exception {
    Set<String> reviewed = ConcurrentHashMap.newKeySet();
    api.server.expect().post().withPath("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews")
        .andReply(201, request -> {
          SelfSubjectAccessReview review =
              Serialization.unmarshal(request.getUtf8Body(), SelfSubjectAccessReview.class);
          reviewed.add(review.getSpec().getResourceAttributes().getResource() + ":"
              + review.getSpec().getResourceAttributes().getVerb());
          review.setStatus(new SubjectAccessReviewStatus(true, false, null, null));
          return review;
        }).always();

    try (Replica a = Replica.start("a", api.client(), MockApi.fastSettings("a").build(), new ServiceLog())) {
      assertThat(Replica.awaitTrue(a::leads, Duration.ofSeconds(10))).isTrue();
    }

    assertThat(verbs(role().getRules())).isEqualTo(new TreeSet<>(reviewed));
  }

  @Test
  void manifestGrantsExactlyTheVerbsTheAdapterSendsOverAWholeTerm() throws Exception {
    api.server.expect().post().withPath("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews")
        .andReply(201, request -> {
          SelfSubjectAccessReview review =
              Serialization.unmarshal(request.getUtf8Body(), SelfSubjectAccessReview.class);
          review.setStatus(new SubjectAccessReviewStatus(true, false, null, null));
          return review;
        }).always();

    // A whole term: create the Lease, renew it, release it on close, and record it as Events; and a follower that
    // watches it.
    ServiceLog log = new ServiceLog();
    try (Replica a = Replica.start("a", api.client(), MockApi.fastSettings("a").build(), log)) {
      assertThat(Replica.awaitTrue(a::leads, Duration.ofSeconds(10))).isTrue();
      try (Replica b = Replica.start("b", api.client(), MockApi.fastSettings("b").build(), log)) {
        assertThat(Replica.awaitTrue(() -> b.runner.state().equals(new ElectionState.Following(
            java.util.Optional.of("a"))), Duration.ofSeconds(10))).isTrue();
        assertThat(api.awaitWrites("a", 3)).as("a renews while b follows").isTrue();
      }
    }

    Set<String> used = new TreeSet<>();
    RecordedRequest request;
    while ((request = api.server.takeRequest(100, TimeUnit.MILLISECONDS)) != null) {
      if (request.getPath().contains("/leases")) {
        used.add("leases:" + verb(request));
      } else if (request.getPath().contains("/events")) {
        used.add("events:" + verb(request));
      }
    }
    assertThat(used).as("verbs sent on leases and events").isEqualTo(verbs(role().getRules()));
  }

  // ---- docs/sharding-rbac.yaml: the sharded runner's Role ---------------------------------------------------

  private static final Path SHARDED_MANIFEST =
      Path.of(System.getProperty("basedir", ".")).resolve("../docs/sharding-rbac.yaml").normalize();

  private Role shardedRole() throws Exception {
    try (InputStream in = Files.newInputStream(SHARDED_MANIFEST)) {
      return api.client().load(in).items().stream().filter(Role.class::isInstance).map(Role.class::cast)
          .findFirst().orElseThrow();
    }
  }

  private static final ShardService NO_WORK = new ShardService() {
    @Override
    public void start(int shard, LeadershipTerm term) {}

    @Override
    public void stop(int shard) {}
  };

  private ShardedRunner sharded(String identity) {
    return ShardedRunner.builder().client(api.client()).decision(MockApi.CONTEND)
        .settings(MockApi.fastSettings(identity).build()).shards(4).service(NO_WORK).start();
  }

  @Test
  void theShardedManifestHoldsTheRoleTheShardedDenialShowsAndABindingToIt() throws Exception {
    Role shown;
    try (InputStream in = new java.io.ByteArrayInputStream(
        LeaseNeeds.shardedRoleYaml(MockApi.NAMESPACE, MockApi.LEASE).getBytes(StandardCharsets.UTF_8))) {
      shown = Serialization.unmarshal(in, Role.class);
    }
    assertThat(shardedRole().getRules()).isEqualTo(shown.getRules());
    assertThat(shardedRole().getRules()).allSatisfy(rule -> assertThat(rule.getResourceNames())
        .as("the membership Leases are named after the pods: no rule can name them").isNullOrEmpty());
    List<HasMetadata> manifest;
    try (InputStream in = Files.newInputStream(SHARDED_MANIFEST)) {
      manifest = api.client().load(in).items();
    }
    assertThat(manifest).extracting(HasMetadata::getKind).containsExactly("ServiceAccount", "Role", "RoleBinding");
    RoleBinding binding = (RoleBinding) manifest.get(2);
    assertThat(binding.getRoleRef().getName()).isEqualTo(shardedRole().getMetadata().getName());
    assertThat(binding.getSubjects()).singleElement()
        .satisfies(subject -> assertThat(subject.getName()).isEqualTo(manifest.get(0).getMetadata().getName()));
  }

  /** docs/sharding.md shows the ERROR of a sharded replica denied list as the runner writes it. */
  @Test
  void theShardingPageShowsTheShardedDenialAsWritten() throws Exception {
    LeaseAccessDeniedException denied = new LeaseAccessDeniedException("orders", "orders-controller-member-pod-a",
        List.of("list"), LeaseNeeds.sharded("orders-controller"));
    String firstLine = denied.getMessage().lines().findFirst().orElseThrow();
    String page = Files.readString(
        Path.of(System.getProperty("basedir", ".")).resolve("../docs/sharding.md").normalize());
    assertThat(page).contains("ERROR ElectionRunner - Not contending for Lease orders/orders-controller-member-pod-a: "
        + firstLine + "\n");
    assertThat(denied.getMessage()).contains(
        Files.readString(SHARDED_MANIFEST).lines().dropWhile(line -> !line.equals("kind: Role")).skip(5).limit(3)
            .map(line -> line + "\n").collect(Collectors.joining()));
  }

  /**
   * The sharded runner's preflight, left to its access reviews (the rules review gets no answer that lists rules),
   * asks exactly the manifest's verbs on leases, delete included; {@code create} on events it leaves to the shards'
   * first Event write, as an election's rules path does.
   */
  @Test
  void theShardedManifestGrantsOnLeasesExactlyTheVerbsTheShardedPreflightChecks() throws Exception {
    Set<String> reviewed = ConcurrentHashMap.newKeySet();
    api.server.expect().post().withPath("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews")
        .andReply(201, request -> {
          SelfSubjectAccessReview review =
              Serialization.unmarshal(request.getUtf8Body(), SelfSubjectAccessReview.class);
          reviewed.add(review.getSpec().getResourceAttributes().getResource() + ":"
              + review.getSpec().getResourceAttributes().getVerb());
          review.setStatus(new SubjectAccessReviewStatus(true, false, null, null));
          return review;
        }).always();

    ShardedRunner a = sharded("a");
    try {
      io.github.electionpolicy.testsupport.Await.until("a owns every shard", () -> a.ownedShards().size() == 4);
      io.github.electionpolicy.testsupport.Await.until("delete asked", () -> reviewed.contains("leases:delete"));
    } finally {
      a.close();
    }

    Set<String> onLeases = verbs(shardedRole().getRules()).stream().filter(verb -> verb.startsWith("leases:"))
        .collect(Collectors.toCollection(TreeSet::new));
    assertThat(new TreeSet<>(reviewed)).isEqualTo(onLeases);
  }

  /**
   * Two replicas over a whole run: each joins, lists and watches the Leases, takes, renews and hands over shards
   * (recording Events), and closes cleanly, deleting its membership Lease. What they send on leases and events is
   * exactly what the manifest grants.
   */
  @Test
  void theShardedManifestGrantsExactlyTheVerbsTwoReplicasSendOverAWholeRun() throws Exception {
    ShardedRunner a = sharded("a");
    ShardedRunner b = null;
    try {
      io.github.electionpolicy.testsupport.Await.until("a owns every shard", () -> a.ownedShards().size() == 4);
      b = sharded("b");
      ShardedRunner second = b;
      io.github.electionpolicy.testsupport.Await.until("the shards split", () -> a.ownedShards().size() == 2
          && second.ownedShards().size() == 2, () -> a.ownedShards() + " " + second.ownedShards());
    } finally {
      if (b != null) {
        b.close();
      }
      a.close();
    }
    assertThat(api.fixture.lease(MockApi.LEASE + "-member-a")).as("deleted on a's clean close").isEmpty();

    Set<String> used = new TreeSet<>();
    RecordedRequest request;
    while ((request = api.server.takeRequest(100, TimeUnit.MILLISECONDS)) != null) {
      if (request.getPath().contains("/leases")) {
        used.add("leases:" + verb(request));
      } else if (request.getPath().contains("/events")) {
        used.add("events:" + verb(request));
      }
    }
    assertThat(used).as("verbs sent on leases and events").isEqualTo(verbs(shardedRole().getRules()));
  }

  /** The RBAC verb of a request, as the API server's request-info resolver names it. */
  private static String verb(RecordedRequest request) {
    String path = request.getPath();
    switch (request.getMethod()) {
      case "GET":
        if (path.contains("watch=true") || path.contains("watch=1")) {
          return "watch";
        }
        return path.matches(".*/leases/[^/?]+(\\?.*)?") ? "get" : "list";
      case "POST":
        return "create";
      case "PUT":
        return "update";
      case "PATCH":
        return "patch";
      case "DELETE":
        return "delete";
      default:
        return request.getMethod();
    }
  }

}
