package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.APIGroup;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.GroupVersionForDiscovery;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewBuilder;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.github.electionpolicy.testsupport.Await;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The manifests of {@code docs/deploy} on the real server, applied the way {@code docs/deploy/README.md} says
 * (its command block, run with this build's kubectl 1.20 as the cluster's admin, with a fresh namespace for
 * {@code orders}): the server accepts all five objects, first in a server-side dry run, then for real; the
 * service account they create may then do every verb the library uses on its Lease ({@link
 * LeaseAccess#REQUIRED_VERBS} and {@link LeaseAccess#ADVISED_VERBS}), by {@code SubjectAccessReview}s for
 * {@code system:serviceaccount:NS:NAME} and by the library's own preflight run as that account (impersonated).
 * The checks cannot pass vacuously: with any one verb taken out of the Role the review names that verb, and a
 * Deployment the server rejects fails the dry run. The cluster has no controller-manager, so the Deployment
 * creates no pods: what is checked is that the server accepts and stores the objects.
 */
class DeploymentManifestsIT {

  private static final KubeCluster CLUSTER = KubeCluster.fromSystemProperties();
  private static final String MARKER = "<!-- DeploymentManifestsIT runs this block. -->";
  // "orders" as a word of its own: the namespace; "orders-controller" (the names) stays.
  private static final Pattern NAMESPACE_WORD = Pattern.compile("(?<![\\w-])orders(?![\\w-])");
  private static KubernetesClient admin;

  @TempDir
  Path work;

  @BeforeAll
  static void connect() {
    admin = CLUSTER.admin();
  }

  @AfterAll
  static void disconnect() {
    admin.close();
  }

  /** Every verb the library uses on leases: a Role that lacks one must fail this test. */
  static Stream<String> libraryVerbs() {
    return Stream.concat(LeaseAccess.REQUIRED_VERBS.stream(), LeaseAccess.ADVISED_VERBS.stream());
  }

  @Test
  void theDocumentedCommandsApplyTheManifestsAndTheServiceAccountMayDoEveryVerbTheLibraryUses() throws Exception {
    String namespace = freshNamespace("docs");
    copyDocsDeploy(namespace);
    List<String> commands = documentedCommands();
    assertThat(commands).as("the block creates the namespace, dry-runs, applies, then asks can-i")
        .startsWith("kubectl create namespace orders", "kubectl apply --dry-run=server -k docs/deploy",
            "kubectl apply -k docs/deploy");
    List<String> askedVerbs = new ArrayList<>();
    List<String> askedEventVerbs = new ArrayList<>();
    for (String command : commands) {
      String localized = NAMESPACE_WORD.matcher(command).replaceAll(namespace);
      Result result = kubectl(localized.substring("kubectl ".length()).split(" "));
      assertThat(result.status()).as("%s%n%s", localized, result.output()).isZero();
      if (command.contains("--dry-run=server")) {
        assertThat(result.output()).as("the server-side dry run accepts every object").contains(
            "serviceaccount/orders-controller created (server dry run)",
            "role.rbac.authorization.k8s.io/orders-controller-leader-election created (server dry run)",
            "rolebinding.rbac.authorization.k8s.io/orders-controller-leader-election created (server dry run)",
            "deployment.apps/orders-controller created (server dry run)",
            "poddisruptionbudget.policy/orders-controller created (server dry run)");
      } else if (command.startsWith("kubectl apply -k")) {
        assertThat(result.output()).contains("serviceaccount/orders-controller created",
            "deployment.apps/orders-controller created", "poddisruptionbudget.policy/orders-controller created");
      } else if (command.startsWith("kubectl auth can-i ")) {
        assertThat(result.output().strip()).as(localized).isEqualTo("yes");
        String[] words = command.split(" ");
        (words[4].equals("events") ? askedEventVerbs : askedVerbs).add(words[3]);
      }
    }
    assertThat(askedVerbs).as("the page's can-i lines ask every verb the library uses")
        .containsExactlyInAnyOrderElementsOf(libraryVerbs().toList());
    assertThat(askedEventVerbs).as("and the verb the leadership Events need, which the server granted")
        .containsExactlyInAnyOrderElementsOf(LeaseAccess.EVENT_VERBS);

    Deployment deployment = admin.apps().deployments().inNamespace(namespace).withName("orders-controller").get();
    assertThat(deployment).as("the server stored the Deployment").isNotNull();
    RoleBinding binding = admin.rbac().roleBindings().inNamespace(namespace)
        .withName("orders-controller-leader-election").get();
    assertThat(binding.getSubjects()).singleElement().satisfies(subject -> {
      assertThat(subject.getName()).isEqualTo(deployment.getSpec().getTemplate().getSpec().getServiceAccountName());
      assertThat(subject.getNamespace()).as("kustomize moved the subject to the namespace").isEqualTo(namespace);
    });
    Result pdb = kubectl("get", "poddisruptionbudget", "orders-controller", "-n", namespace, "-o", "name");
    assertThat(pdb.output().strip()).as("the server stored the PodDisruptionBudget")
        .isEqualTo("poddisruptionbudget.policy/orders-controller");

    // What the pods of this Deployment would be allowed, asked of the server's RBAC authorizer.
    String serviceAccount = deployment.getSpec().getTemplate().getSpec().getServiceAccountName();
    String leaseName = env(deployment, "ELECTION_LEASENAME");
    assertGranted(namespace, serviceAccount, leaseName);
    // And the library's own preflight, as that account: the same questions the runner asks at start.
    try (KubernetesClient asServiceAccount = KubeCluster.client(impersonating(namespace, serviceAccount))) {
      LeaseAccess access = LeaseAccess.review(asServiceAccount, namespace, leaseName);
      assertThat(access.verdict()).as("%s", access).isEqualTo(LeaseAccess.Verdict.GRANTED);
      assertThat(access.watchDenied()).isFalse();
    }
  }

  @ParameterizedTest
  @MethodSource("libraryVerbs")
  void withAVerbTakenOutOfTheRoleTheAccessReviewFailsNamingIt(String verb) throws Exception {
    String namespace = freshNamespace("no-" + verb);
    copyDocsDeploy(namespace);
    assertThat(kubectl("create", "namespace", namespace).status()).isZero();
    Result applied = kubectl("apply", "-k", work.resolve("docs/deploy").toString());
    assertThat(applied.status()).as(applied.output()).isZero();
    assertGranted(namespace, "orders-controller", "orders-controller");

    admin.rbac().roles().inNamespace(namespace).withName("orders-controller-leader-election").edit(role -> {
      List<PolicyRule> rules = new ArrayList<>();
      for (PolicyRule rule : role.getRules()) {
        rule.setVerbs(new ArrayList<>(rule.getVerbs().stream().filter(v -> !v.equals(verb)).toList()));
        if (!rule.getVerbs().isEmpty()) {
          rules.add(rule); // the real server refuses a rule with no verbs (422)
        }
      }
      role.setRules(rules);
      return role;
    });
    Role role = admin.rbac().roles().inNamespace(namespace).withName("orders-controller-leader-election").get();
    assertThat(role.getRules()).flatExtracting(PolicyRule::getVerbs).doesNotContain(verb);

    // The authorizer sees the Role through a watch: wait until the change arrived, then demand exactly this verb.
    Await.holds(() -> !deniedVerbs(namespace, "orders-controller", "orders-controller").isEmpty(),
        Duration.ofSeconds(30));
    assertThat(deniedVerbs(namespace, "orders-controller", "orders-controller")).containsExactly(verb);
    assertThatThrownBy(() -> assertGranted(namespace, "orders-controller", "orders-controller"))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("may not " + verb + " leases");
  }

  @Test
  void aDeploymentTheServerRejectsFailsTheServerSideDryRunAndNothingIsCreated() throws Exception {
    String namespace = freshNamespace("rejected");
    Path deploy = copyDocsDeploy(namespace);
    // The pod template's label no longer matches the selector: kubectl's client-side schema check passes it,
    // the API server's validation refuses it.
    Path deployment = deploy.resolve("deployment.yaml");
    String text = Files.readString(deployment);
    String label = "        app.kubernetes.io/name: orders-controller\n";
    int templateLabel = text.lastIndexOf(label);
    assertThat(templateLabel).as("the template's label").isGreaterThan(text.indexOf("  template:"));
    Files.writeString(deployment, text.substring(0, templateLabel) + "        app.kubernetes.io/name: other\n"
        + text.substring(templateLabel + label.length()));
    assertThat(kubectl("create", "namespace", namespace).status()).isZero();

    Result dryRun = kubectl("apply", "--dry-run=server", "-k", deploy.toString());
    assertThat(dryRun.status()).as(dryRun.output()).isNotZero();
    assertThat(dryRun.output()).contains("The Deployment \"orders-controller\" is invalid")
        .contains("selector` does not match template `labels`");
    assertThat(admin.apps().deployments().inNamespace(namespace).list().getItems()).isEmpty();
    assertThat(admin.serviceAccounts().inNamespace(namespace).withName("orders-controller").get())
        .as("a dry run creates nothing").isNull();
  }

  /** Fails naming every verb on the Lease that the service account may not use. */
  private static void assertGranted(String namespace, String serviceAccount, String leaseName) {
    List<String> denied = deniedVerbs(namespace, serviceAccount, leaseName);
    if (!denied.isEmpty()) {
      throw new AssertionError("system:serviceaccount:" + namespace + ":" + serviceAccount + " may not "
          + String.join(", ", denied) + " leases (coordination.k8s.io) named " + leaseName + " in namespace "
          + namespace + "; the library uses " + libraryVerbs().toList() + ": fix docs/deploy/rbac.yaml");
    }
  }

  /**
   * The verbs the library uses that the server's RBAC denies to the service account: one SubjectAccessReview per
   * verb, with the user and the groups a token of that account carries, by name except {@code create} (as the
   * library's preflight asks: RBAC cannot scope create to a name).
   */
  private static List<String> deniedVerbs(String namespace, String serviceAccount, String leaseName) {
    List<String> denied = new ArrayList<>();
    libraryVerbs().forEach(verb -> {
      SubjectAccessReview review = new SubjectAccessReviewBuilder()
          .withNewSpec()
          .withUser("system:serviceaccount:" + namespace + ":" + serviceAccount)
          .withGroups("system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated")
          .withNewResourceAttributes()
          .withGroup("coordination.k8s.io")
          .withResource("leases")
          .withVerb(verb)
          .withNamespace(namespace)
          .withName(verb.equals("create") ? null : leaseName)
          .endResourceAttributes()
          .endSpec()
          .build();
      SubjectAccessReview answer = admin.authorization().v1().subjectAccessReview().create(review);
      if (!Boolean.TRUE.equals(answer.getStatus().getAllowed())) {
        denied.add(verb);
      }
    });
    return denied;
  }

  /** The admin's credentials, impersonating the service account (as {@code kubectl --as} does). */
  private static Config impersonating(String namespace, String serviceAccount) {
    return new ConfigBuilder(Config.fromKubeconfig(CLUSTER.adminKubeconfig().toFile()))
        .withImpersonateUsername("system:serviceaccount:" + namespace + ":" + serviceAccount)
        .withImpersonateGroups("system:serviceaccounts", "system:serviceaccounts:" + namespace,
            "system:authenticated")
        .withNamespace(namespace)
        .build();
  }

  private static String env(Deployment deployment, String name) {
    return deployment.getSpec().getTemplate().getSpec().getContainers().get(0).getEnv().stream()
        .filter(e -> e.getName().equals(name)).map(EnvVar::getValue).findFirst()
        .orElseThrow(() -> new AssertionError("the Deployment sets no " + name));
  }

  /**
   * docs/deploy copied to {@code work/docs/deploy}, with the one change the page tells a user to make for another
   * namespace (the kustomization's namespace line); on a server without {@code policy/v1} (1.20: it came in
   * 1.21) the PodDisruptionBudget goes in as {@code policy/v1beta1}, whose fields it uses are the same.
   */
  private Path copyDocsDeploy(String namespace) throws IOException {
    Path source = CLUSTER.repo().resolve("docs/deploy");
    Path target = Files.createDirectories(work.resolve("docs/deploy"));
    try (Stream<Path> files = Files.list(source)) {
      for (Path file : files.toList()) {
        Files.copy(file, target.resolve(file.getFileName().toString()));
      }
    }
    Path kustomization = target.resolve("kustomization.yaml");
    String text = Files.readString(kustomization);
    assertThat(text).as("kustomization.yaml sets the namespace on one line").containsOnlyOnce("\nnamespace: orders\n");
    Files.writeString(kustomization, text.replace("\nnamespace: orders\n", "\nnamespace: " + namespace + "\n"));
    if (!servesPolicyV1()) {
      Path pdb = target.resolve("poddisruptionbudget.yaml");
      String manifest = Files.readString(pdb);
      assertThat(manifest).containsOnlyOnce("apiVersion: policy/v1\n");
      Files.writeString(pdb, manifest.replace("apiVersion: policy/v1\n", "apiVersion: policy/v1beta1\n"));
    }
    return target;
  }

  private static boolean servesPolicyV1() {
    APIGroup policy = admin.getApiGroup("policy");
    return policy != null && policy.getVersions().stream().map(GroupVersionForDiscovery::getVersion)
        .anyMatch("v1"::equals);
  }

  /** The shell block of docs/deploy/README.md after the marker this test runs. */
  private static List<String> documentedCommands() throws IOException {
    List<String> lines = Files.readAllLines(CLUSTER.repo().resolve("docs/deploy/README.md"));
    int marker = lines.indexOf(MARKER);
    assertThat(marker).as("docs/deploy/README.md has the marker %s", MARKER).isNotNegative();
    assertThat(lines.get(marker + 1)).isEqualTo("```sh");
    List<String> block = new ArrayList<>();
    for (int i = marker + 2; !lines.get(i).equals("```"); i++) {
      assertThat(lines.get(i)).as("every line of the block is a kubectl command").startsWith("kubectl ");
      block.add(lines.get(i));
    }
    return block;
  }

  private record Result(int status, String output) {}

  /** This build's kubectl, as the cluster's admin, in {@code work} (where docs/deploy is the copy). */
  private Result kubectl(String... args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of(CLUSTER.kubectl().toString(),
        "--kubeconfig", CLUSTER.adminKubeconfig().toString()));
    command.addAll(List.of(args));
    Path output = Files.createTempFile(work, "kubectl", ".out");
    Process process = new ProcessBuilder(command).directory(work.toFile()).redirectErrorStream(true)
        .redirectOutput(output.toFile()).start();
    if (!process.waitFor(60, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      throw new AssertionError(String.join(" ", command) + " did not finish within 60 s");
    }
    return new Result(process.exitValue(), Files.readString(output, StandardCharsets.UTF_8));
  }

  private static String freshNamespace(String what) {
    return "deploy-" + what + "-" + Integer.toHexString(ThreadLocalRandom.current().nextInt(0x1000, 0xffff));
  }
}
