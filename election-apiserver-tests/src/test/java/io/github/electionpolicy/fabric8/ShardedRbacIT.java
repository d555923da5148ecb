package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.http.BasicBuilder;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.Interceptor;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import io.github.electionpolicy.testsupport.Await;
import io.github.electionpolicy.testsupport.LogCapture;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The sharded runner's RBAC for real: {@code docs/sharding-rbac.yaml} (ServiceAccount, Role, RoleBinding) applied to
 * a fresh namespace, as written and as a user might get it wrong, with replicas that run as its service account (a
 * token the server issued for it), so the preflight's verdicts and every Lease call are judged by the real RBAC
 * authorizer. As written, two replicas own every shard, close cleanly and delete their membership Leases, with not a
 * word about access; a Role that names only the membership Lease stops the replica before it joins, naming what the
 * server denied, with nothing written; a Role without {@code delete} runs and warns once with the rule to add, and
 * the closed replica's membership Lease stays behind, released.
 */
class ShardedRbacIT {

  private static final KubeCluster CLUSTER = KubeCluster.fromSystemProperties();
  /** The names docs/sharding-rbac.yaml uses: its service account, and the base Lease its comment names. */
  private static final String ACCOUNT = "orders-controller";
  private static final int SHARDS = 4;
  private static final ShardLeases LEASES = new ShardLeases(MockApi.LEASE, SHARDS);
  /** The Role's one rule on leases, as docs/sharding-rbac.yaml writes it (the Role RbacManifestTest checks). */
  private static final String LEASE_RULE = LeaseNeeds.shardedLeaseRuleYaml();
  private static final ShardService NO_WORK = new ShardService() {
    @Override
    public void start(int shard, LeadershipTerm term) {}

    @Override
    public void stop(int shard) {}
  };

  private static KubernetesClient admin;

  private final List<ShardedRunner> runners = new ArrayList<>();
  private final List<KubernetesClient> clients = new ArrayList<>();
  private String namespace;

  @BeforeAll
  static void connect() {
    admin = CLUSTER.admin();
  }

  @AfterAll
  static void disconnect() {
    admin.close();
  }

  @AfterEach
  void closeAll() {
    runners.forEach(ShardedRunner::close);
    clients.forEach(KubernetesClient::close);
    if (namespace != null) {
      admin.namespaces().withName(namespace).delete();
    }
  }

  /**
   * docs/sharding-rbac.yaml with its namespace replaced (every {@code namespace: orders}, as RbacIT does for
   * docs/deploy/rbac.yaml) and then {@code edit}ed, applied to a fresh namespace; returns a token of its service
   * account once the server's authorizer grants what the edited Role grants in every case ({@code get} on the
   * membership Lease of replica {@code a}: the authorizer sees a new Role and binding through a watch, a little later).
   */
  private String applyShardingRbac(String what, UnaryOperator<String> edit) throws IOException {
    namespace = "shrbac-" + what + "-" + Integer.toHexString(ThreadLocalRandom.current().nextInt(0x1000, 0xffff));
    String manifest = Files.readString(CLUSTER.repo().resolve("docs/sharding-rbac.yaml"));
    assertThat(manifest).as("the Role's one rule on leases").containsOnlyOnce(LEASE_RULE);
    assertThat(occurrences(manifest, "namespace: orders"))
        .as("the service account's, the Role's, the binding's and its subject's namespace").isEqualTo(4);
    manifest = edit.apply(manifest.replace("namespace: orders", "namespace: " + namespace));
    KubeCluster.createNamespace(admin, namespace);
    admin.load(new ByteArrayInputStream(manifest.getBytes(StandardCharsets.UTF_8))).inNamespace(namespace).create();
    Await.until("the authorizer grants get on " + LEASES.memberLease("a") + " to " + ACCOUNT,
        () -> allowed("get", LEASES.memberLease("a")), Duration.ofSeconds(30));
    return KubeCluster.token(admin, namespace, ACCOUNT);
  }

  /** Whether the server's RBAC lets the service account do {@code verb} on the Lease {@code name}, asked as admin. */
  private boolean allowed(String verb, String name) {
    SubjectAccessReview review = new SubjectAccessReviewBuilder()
        .withNewSpec()
        .withUser("system:serviceaccount:" + namespace + ":" + ACCOUNT)
        .withGroups("system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated")
        .withNewResourceAttributes()
        .withGroup("coordination.k8s.io").withResource("leases").withVerb(verb).withNamespace(namespace)
        .withName(name)
        .endResourceAttributes()
        .endSpec()
        .build();
    return Boolean.TRUE.equals(admin.authorization().v1().subjectAccessReview().create(review).getStatus()
        .getAllowed());
  }

  /** A replica as the service account: a client of its own with the token, {@value #SHARDS} shards. */
  private ShardedRunner replica(String token, String identity) {
    return replica(token, identity, null);
  }

  /** As {@link #replica(String, String)}, each request its client sends added to {@code sent} unless null. */
  private ShardedRunner replica(String token, String identity, List<String> sent) {
    KubernetesClient client = sent == null ? KubeCluster.client(CLUSTER.configWithToken(token, namespace))
        : new KubernetesClientBuilder().withConfig(CLUSTER.configWithToken(token, namespace))
            .withHttpClientFactory(new JdkHttpClientFactory())
            .withHttpClientBuilderConsumer(builder -> builder.addOrReplaceInterceptor("sent", new Interceptor() {
              @Override
              public void before(BasicBuilder request, HttpRequest sending, RequestTags tags) {
                sent.add(sending.method() + " " + sending.uri().getPath()
                    + (sending.uri().getQuery() == null ? "" : "?" + sending.uri().getQuery()));
              }
            }))
            .build();
    clients.add(client);
    ShardedRunner runner = ShardedRunner.builder()
        .client(client)
        .decision(MockApi.CONTEND)
        // The fast settings' retry period (hand-overs in milliseconds), with a renew deadline of 5 s (2.5 s per
        // request): on the shared 2-core machine the real server's answers stalled past the fast settings' 750 ms,
        // the membership Lease was lost, and a lost Lease is not deleted at close.
        .settings(MockApi.fastSettings(identity).namespace(namespace).leaseDuration(Duration.ofSeconds(8))
            .renewDeadline(Duration.ofSeconds(5)).build())
        .shards(SHARDS)
        .service(NO_WORK)
        .start();
    runners.add(runner);
    return runner;
  }

  /** The Leases of the sharded controller on the server, by name, as the admin lists them by their label. */
  private Map<String, Lease> leasesOnServer() {
    Map<String, Lease> leases = new TreeMap<>();
    admin.leases().inNamespace(namespace).withLabel(ShardLeases.LABEL, LEASES.labelValue()).list().getItems()
        .forEach(lease -> leases.put(lease.getMetadata().getName(), lease));
    return leases;
  }

  private static List<String> shardLeases() {
    return IntStream.range(0, SHARDS).mapToObj(LEASES::shardLease).toList();
  }

  private static boolean released(Lease lease) {
    String holder = lease.getSpec().getHolderIdentity();
    return holder == null || holder.isEmpty();
  }

  /**
   * The lines of {@code text} at WARN or ERROR (slf4j-simple writes the level after the thread's name) that speak of
   * access: a denial, a refused call, a review that could not be made. Not every warning: a loaded machine's slow
   * answers warn too ("renewal failed (update Lease got no answer within ...)"), and have nothing to do with RBAC.
   */
  private static List<String> accessWarnings(String text) {
    return text.lines().filter(line -> line.contains("] WARN ") || line.contains("] ERROR "))
        .filter(line -> Stream.of("may not", "RBAC", "HTTP 403", "orbidden", "Not contending", "could not be deleted")
            .anyMatch(line::contains))
        .toList();
  }

  private static int occurrences(String text, String part) {
    return (int) Pattern.compile(Pattern.quote(part)).matcher(text).results().count();
  }

  /**
   * The rules on leases of a Role that names only replica {@code a}'s membership Lease: every verb of the sharded
   * Role by {@code resourceNames}, {@code create} too or in a rule of its own (as docs/deploy/rbac.yaml has it).
   */
  private static String membershipLeaseRules(boolean createNamedToo) {
    return "  - apiGroups: [\"coordination.k8s.io\"]\n"
        + "    resources: [\"leases\"]\n"
        + "    resourceNames: [\"" + LEASES.memberLease("a") + "\"]\n"
        + "    verbs: [\"get\", \"list\", \"watch\"" + (createNamedToo ? ", \"create\"" : "") + ", \"update\", "
        + "\"delete\"]\n"
        + (createNamedToo ? "" : "  - apiGroups: [\"coordination.k8s.io\"]\n    resources: [\"leases\"]\n"
            + "    verbs: [\"create\"]\n");
  }

  @Test
  void asWrittenTwoReplicasOwnEveryShardCloseCleanlyAndDeleteTheirMembershipLeases() throws Exception {
    String token = applyShardingRbac("docs", UnaryOperator.identity());
    String logged;
    try (LogCapture logs = new LogCapture()) {
      ShardedRunner a = replica(token, "a");
      ShardedRunner b = replica(token, "b");
      Await.until("a and b own two shards each", () -> a.ownedShards().size() == 2 && b.ownedShards().size() == 2,
          () -> a + " " + b + " failures " + a.failure() + " " + b.failure());
      assertThat(leasesOnServer()).containsKeys(LEASES.memberLease("a"), LEASES.memberLease("b"))
          .containsKeys(shardLeases().toArray(String[]::new));

      b.close();
      Await.until("a owns every shard once b left", () -> a.ownedShards().size() == SHARDS, () -> a.toString());
      a.close();
      assertThat(a.failure()).as("a closed, not stopped on its own").isEmpty();
      assertThat(b.failure()).isEmpty();
      logged = logs.text();
    }
    Map<String, Lease> left = leasesOnServer();
    assertThat(left.keySet()).as("each replica deleted its membership Lease; the shards' Leases stay")
        .containsExactlyInAnyOrderElementsOf(shardLeases());
    assertThat(left.values()).as("every shard's Lease released by a clean close").allMatch(ShardedRbacIT::released);
    assertThat(accessWarnings(logged)).as("no warning or error about access: the preflight passed, every call was "
        + "allowed").isEmpty();
    assertThat(logged).doesNotContain("may not").doesNotContain("Could not check RBAC");
  }

  /**
   * The Role a user gets by following docs/deploy/rbac.yaml (one Lease, named) with the membership Lease's name:
   * every verb by {@code resourceNames: [<membership Lease>]}, with {@code create} in a rule of its own (as there:
   * RBAC cannot name what does not exist yet) or in the named rule too. The preflight asks without a name (the
   * replica writes its shards' Leases too, and a list and watch by label has none), so the real server denies what
   * the Role names; the replica stops before it joins, and writes nothing.
   */
  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void aRoleThatNamesOnlyTheMembershipLeaseStopsTheReplicaBeforeItJoinsNamingWhatTheServerDenied(
      boolean createNamedToo) throws Exception {
    String member = LEASES.memberLease("a");
    String token = applyShardingRbac(createNamedToo ? "named-all" : "named",
        manifest -> manifest.replace(LEASE_RULE, membershipLeaseRules(createNamedToo)));
    List<String> denied = createNamedToo ? List.of("get", "create", "update", "list", "watch")
        : List.of("get", "update", "list", "watch");
    String logged;
    try (LogCapture logs = new LogCapture()) {
      ShardedRunner a = replica(token, "a");
      assertThat(a.awaitStopped(Duration.ofSeconds(20))).as("the replica stops at its preflight").isTrue();
      assertThat(a.failure()).hasValueSatisfying(failure -> assertThat(failure)
          .isInstanceOfSatisfying(LeaseAccessDeniedException.class, e -> {
            assertThat(e.missingVerbs()).as("as the real server answered").containsExactlyElementsOf(denied);
            assertThat(e.namespace()).isEqualTo(namespace);
            assertThat(e.leaseName()).isEqualTo(member);
            assertThat(e).hasMessageContaining("leader election may not " + String.join(", ", denied)
                    + " leases (coordination.k8s.io) in namespace \"" + namespace + "\"")
                .hasMessageContaining("a sharded runner needs get, create, update, list, watch on every Lease")
                .hasMessageContaining(LeaseNeeds.shardedRoleYaml(namespace, MockApi.LEASE));
          }));
      assertThat(a.ownedShards()).isEmpty();
      a.close();
      logged = logs.text();
    }
    assertThat(occurrences(logged, "Not contending for Lease " + namespace + "/" + member
        + ": leader election may not " + String.join(", ", denied) + " leases")).as("one ERROR, in %s", logged)
        .isEqualTo(1);
    assertThat(admin.leases().inNamespace(namespace).list().getItems()).as("nothing written").isEmpty();
  }

  /**
   * A finding on the real server, fixed (issue 17): a replica opened its view of the Leases (the informer of
   * {@link ShardLeaseSource}) at start, beside its membership runner's preflight, so under a Role without
   * namespace-wide {@code list} the server refused that list before the preflight's verdict, and fabric8's Reflector
   * logged {@code listSyncAndWatch failed for coordination.k8s.io/v1/namespaces/NS/leases, will stop} at ERROR (when
   * its answer came before the close), before the runner's own ERROR that names the verbs and the fix. The view now
   * opens once the preflight let the membership runner contend: the replica's client sends no list or watch of the
   * Leases at all, and nothing is logged at ERROR but the runner's one line.
   */
  @Test
  void aReplicaThePreflightStopsSendsNoListBeforeIt() throws Exception {
    String token = applyShardingRbac("named-view", manifest -> manifest.replace(LEASE_RULE,
        membershipLeaseRules(false)));
    List<String> sent = new java.util.concurrent.CopyOnWriteArrayList<>();
    String logged;
    try (LogCapture logs = new LogCapture()) {
      ShardedRunner a = replica(token, "a", sent);
      assertThat(a.awaitStopped(Duration.ofSeconds(20))).isTrue();
      assertThat(a.failure()).containsInstanceOf(LeaseAccessDeniedException.class);
      a.close();
      logged = logs.text();
    }
    String leases = "/apis/coordination.k8s.io/v1/namespaces/" + namespace + "/leases";
    assertThat(sent).as("the preflight asked the server").anyMatch(r -> r.contains("selfsubjectrulesreviews"));
    assertThat(sent).as("no list or watch of the Leases").noneMatch(r -> r.startsWith("GET " + leases + "?")
        || r.equals("GET " + leases));
    assertThat(logged).doesNotContain("listSyncAndWatch failed");
    assertThat(logged.lines().filter(line -> line.contains("] ERROR ")).toList()).as("one ERROR, the runner's")
        .singleElement().asString().contains("Not contending for Lease " + namespace + "/" + LEASES.memberLease("a"));
  }

  /**
   * docs/sharding-rbac.yaml without {@code delete}: the replica owns every shard, the preflight warns once that it
   * may not delete, with the rule to add, and a clean close leaves the membership Lease behind, released (the close's
   * delete is refused by the server, which one INFO line says: the preflight warned already).
   */
  @Test
  void withoutDeleteTheReplicaRunsWarnsOnceWithTheRuleAndItsMembershipLeaseStaysReleased() throws Exception {
    String token = applyShardingRbac("no-delete",
        manifest -> manifest.replace(LEASE_RULE, LEASE_RULE.replace(", \"delete\"", "")));
    String member = LEASES.memberLease("a");
    String warning = "may not delete leases in namespace \"" + namespace + "\": when this replica closes, its "
        + "membership Lease " + member + " stays behind, released";
    String logged;
    try (LogCapture logs = new LogCapture()) {
      ShardedRunner a = replica(token, "a");
      Await.until("a owns every shard", () -> a.ownedShards().size() == SHARDS,
          () -> a + " failure " + a.failure());
      Await.until("the delete warning", () -> logs.text().contains(warning), logs::text);
      assertThat(a.failure()).isEmpty();
      a.close();
      assertThat(a.failure()).isEmpty();
      logged = logs.text();
    }
    assertThat(occurrences(logged, warning)).as("warned once, in %s", logged).isEqualTo(1);
    Matcher rule = Pattern.compile(Pattern.quote(warning) + ".*?To fix, grant the Role this rule:\n"
        + Pattern.quote(LeaseNeeds.shardedLeaseRuleYaml()), Pattern.DOTALL).matcher(logged);
    assertThat(rule.find()).as("the warning shows the rule to add, in %s", logged).isTrue();
    assertThat(accessWarnings(logged)).as("what the first test's check finds here: the one warning, in %s", logged)
        .singleElement().asString().contains(warning);
    assertThat(logged).as("the close's delete, refused by the server: INFO, since the preflight warned")
        .contains("] INFO ").contains("Lease " + namespace + "/" + member
        + " was released and stays, not deleted (delete Lease failed: HTTP 403");
    Map<String, Lease> left = leasesOnServer();
    assertThat(left).as("the membership Lease stays").containsKey(member);
    assertThat(released(left.get(member))).as("released: %s", left.get(member).getSpec()).isTrue();
    assertThat(left.keySet()).containsAll(shardLeases());
  }
}
