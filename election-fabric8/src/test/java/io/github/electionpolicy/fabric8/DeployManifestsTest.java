package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The manifests of {@code docs/deploy} agree with each other, with the library and with the page that explains
 * them ({@code docs/deploy/README.md}), without a server. {@code DeploymentManifestsIT} (election-apiserver-tests)
 * applies them to a real one.
 */
class DeployManifestsTest {

  /** Spring Boot's default {@code spring.lifecycle.timeout-per-shutdown-phase}: the web server's drain. */
  private static final Duration SPRING_BOOT_SHUTDOWN_PHASE = Duration.ofSeconds(30);
  private static final Path DIR =
      Path.of(System.getProperty("basedir", ".")).resolve("../docs/deploy").normalize();
  // A row of the page's field table: | `file` | `field line` | why |
  private static final Pattern FIELD_ROW = Pattern.compile("^\\| `([a-z]+\\.yaml)` \\| `([^`]+)` \\| .+\\|$");

  @RegisterExtension
  final MockApi api = new MockApi();

  private List<HasMetadata> load(String file) throws IOException {
    try (InputStream in = Files.newInputStream(DIR.resolve(file))) {
      return api.client().load(in).items();
    }
  }

  private <T extends HasMetadata> T only(String file, Class<T> type) throws IOException {
    List<T> found = load(file).stream().filter(type::isInstance).map(type::cast).toList();
    assertThat(found).as("one %s in %s", type.getSimpleName(), file).hasSize(1);
    return found.get(0);
  }

  private Deployment deployment() throws IOException {
    return only("deployment.yaml", Deployment.class);
  }

  private Container container() throws IOException {
    List<Container> containers = deployment().getSpec().getTemplate().getSpec().getContainers();
    assertThat(containers).hasSize(1);
    return containers.get(0);
  }

  private EnvVar env(String name) throws IOException {
    return container().getEnv().stream().filter(e -> e.getName().equals(name)).findFirst()
        .orElseThrow(() -> new AssertionError("deployment.yaml sets no " + name));
  }

  private static String kustomization() throws IOException {
    return Files.readString(DIR.resolve("kustomization.yaml"));
  }

  @Test
  void theKustomizationListsEveryManifestOfTheDirectoryAndSetsTheNamespaceTheyAllHave() throws Exception {
    List<String> manifests;
    try (Stream<Path> files = Files.list(DIR)) {
      manifests = files.map(f -> f.getFileName().toString())
          .filter(f -> f.endsWith(".yaml") && !f.equals("kustomization.yaml")).sorted().toList();
    }
    List<String> resources = new ArrayList<>();
    Matcher item = Pattern.compile("(?m)^  - (\\S+)$").matcher(kustomization());
    while (item.find()) {
      resources.add(item.group(1));
    }
    assertThat(resources).containsExactlyInAnyOrderElementsOf(manifests);
    assertThat(kustomization()).contains("\nnamespace: orders\n");
    for (String file : manifests) {
      assertThat(load(file)).as(file).isNotEmpty()
          .allSatisfy(object -> assertThat(object.getMetadata().getNamespace()).as(file).isEqualTo("orders"));
    }
  }

  @Test
  void thePodsRunAsTheServiceAccountThatTheRoleBindingBindsWithItsTokenMounted() throws Exception {
    PodSpec pod = deployment().getSpec().getTemplate().getSpec();
    ServiceAccount account = only("rbac.yaml", ServiceAccount.class);
    RoleBinding binding = only("rbac.yaml", RoleBinding.class);
    assertThat(pod.getServiceAccountName()).isEqualTo(account.getMetadata().getName());
    assertThat(binding.getSubjects()).singleElement().satisfies(subject -> {
      assertThat(subject.getKind()).isEqualTo("ServiceAccount");
      assertThat(subject.getName()).isEqualTo(pod.getServiceAccountName());
    });
    assertThat(binding.getRoleRef().getName()).isEqualTo(only("rbac.yaml", Role.class).getMetadata().getName());
    assertThat(pod.getAutomountServiceAccountToken()).isTrue();
  }

  @Test
  void theIdentityAndTheNamespaceComeFromTheDownwardApiAndTheLeaseNameIsTheOneTheRoleGrants() throws Exception {
    assertThat(env(LeaseSettings.POD_NAME_VARIABLE).getValueFrom().getFieldRef().getFieldPath())
        .isEqualTo("metadata.name");
    assertThat(env("ELECTION_NAMESPACE").getValueFrom().getFieldRef().getFieldPath())
        .isEqualTo("metadata.namespace");
    Role role = only("rbac.yaml", Role.class);
    List<String> names = role.getRules().stream().flatMap(rule -> rule.getResourceNames().stream()).toList();
    assertThat(names).containsExactly(env("ELECTION_LEASENAME").getValue());
    assertThat(role.getRules()).flatExtracting(PolicyRule::getVerbs)
        .containsAll(LeaseAccess.REQUIRED_VERBS).containsAll(LeaseAccess.ADVISED_VERBS)
        .containsAll(LeaseAccess.EVENT_VERBS);
  }

  @Test
  void theGracePeriodOutlastsTheRunnersCloseAtTheDefaultTimingsPlusSpringBootsDrainAndThereIsNoPreStop()
      throws Exception {
    LeaseSettings defaults = LeaseSettings.builder().leaseName(env("ELECTION_LEASENAME").getValue()).build();
    // docs/fabric8.md's bound for close(): stopTimeout, then the Lease loop's round and the release.
    Duration close = defaults.stopTimeout().plus(defaults.requestTimeout().multipliedBy(5)).plusSeconds(1);
    assertThat(close).isEqualTo(Duration.ofSeconds(31));
    long grace = deployment().getSpec().getTemplate().getSpec().getTerminationGracePeriodSeconds();
    assertThat(Duration.ofSeconds(grace)).isGreaterThan(close.plus(SPRING_BOOT_SHUTDOWN_PHASE));
    assertThat(container().getLifecycle()).as("no preStop: it would only delay the release").isNull();
  }

  @Test
  void theProbesAskTheLibrarysHealthOnTheContainersPort() throws Exception {
    Container container = container();
    assertThat(container.getPorts()).singleElement().satisfies(port -> {
      assertThat(port.getName()).isEqualTo("http");
      assertThat(port.getContainerPort()).isEqualTo(8080);
    });
    assertThat(container.getStartupProbe().getHttpGet().getPath()).isEqualTo("/actuator/health/liveness");
    assertThat(container.getLivenessProbe().getHttpGet().getPath()).isEqualTo("/actuator/health/liveness");
    assertThat(container.getReadinessProbe().getHttpGet().getPath()).isEqualTo("/actuator/health/readiness");
    assertThat(Stream.of(container.getStartupProbe(), container.getLivenessProbe(), container.getReadinessProbe()))
        .allSatisfy(probe -> assertThat(probe.getHttpGet().getPort().getStrVal()).isEqualTo("http"));
  }

  @Test
  void theDisruptionBudgetSelectsThePodsOfTheDeploymentAndLeavesOneToTakeOver() throws Exception {
    Deployment deployment = deployment();
    PodDisruptionBudget budget = only("poddisruptionbudget.yaml", PodDisruptionBudget.class);
    Map<String, String> selector = deployment.getSpec().getSelector().getMatchLabels();
    assertThat(budget.getSpec().getSelector().getMatchLabels()).isEqualTo(selector);
    assertThat(deployment.getSpec().getTemplate().getMetadata().getLabels()).containsAllEntriesOf(selector);
    assertThat(deployment.getSpec().getReplicas()).isGreaterThanOrEqualTo(2);
    assertThat(budget.getSpec().getMaxUnavailable().getIntVal()).isLessThan(deployment.getSpec().getReplicas());
    assertThat(budget.getSpec().getMinAvailable()).isNull();
  }

  @Test
  void everyFieldThePageExplainsIsInItsFileAsWritten() throws Exception {
    List<String> page = Files.readAllLines(DIR.resolve("README.md"));
    int rows = 0;
    for (String line : page) {
      Matcher row = FIELD_ROW.matcher(line);
      if (row.matches()) {
        rows++;
        List<String> fileLines = Files.readAllLines(DIR.resolve(row.group(1))).stream().map(String::strip).toList();
        assertThat(fileLines).as("%s has the line the page explains", row.group(1)).contains(row.group(2));
      }
    }
    assertThat(rows).as("rows of the page's field table").isGreaterThanOrEqualTo(10);
  }
}
