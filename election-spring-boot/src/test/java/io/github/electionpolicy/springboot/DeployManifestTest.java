package io.github.electionpolicy.springboot;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.github.electionpolicy.fabric8.LeaseSettings;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

/**
 * {@code docs/deploy/deployment.yaml} is written for this starter: the environment it gives the container, as the
 * kubelet fills in its downward API fields, is bound by the auto-configuration to the Lease name and namespace,
 * and its probes ask the paths of docs/spring-boot.md's Deployment, which {@code ProbesOverHttpContract} requests
 * of running applications configured as that page says.
 */
class DeployManifestTest {

  private static final Path MANIFEST =
      Path.of(System.getProperty("basedir", ".")).resolve("../docs/deploy/deployment.yaml").normalize();
  private static final Pattern PROBE_PATH = Pattern.compile("path: (/[^,}]+)");

  private static Container container() throws IOException {
    try (InputStream in = Files.newInputStream(MANIFEST)) {
      Deployment deployment = Serialization.unmarshal(in, Deployment.class);
      return deployment.getSpec().getTemplate().getSpec().getContainers().get(0);
    }
  }

  /** The container's environment as the kubelet sets it for pod {@code pod} in namespace {@code namespace}. */
  private static Map<String, Object> environment(String pod, String namespace) throws IOException {
    Map<String, Object> env = new HashMap<>();
    for (EnvVar variable : container().getEnv()) {
      if (variable.getValueFrom() == null) {
        env.put(variable.getName(), variable.getValue());
      } else {
        String field = variable.getValueFrom().getFieldRef().getFieldPath();
        assertThat(field).isIn("metadata.name", "metadata.namespace");
        env.put(variable.getName(), field.equals("metadata.name") ? pod : namespace);
      }
    }
    return env;
  }

  @Test
  void theDeploymentsEnvironmentGivesTheStarterTheLeaseNameAndThePodsNamespaceAndIdentity() throws IOException {
    Map<String, Object> env = environment("orders-controller-7d9f-abcde", "shop");
    Contexts.election()
        .withPropertyValues(Contexts.UNELECTED)
        .withInitializer(context -> context.getEnvironment().getPropertySources().addFirst(
            new SystemEnvironmentPropertySource(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, env)))
        .run(context -> {
          assertThat(context).hasNotFailed();
          LeaseSettings settings = context.getBean(LeaseSettings.class);
          assertThat(settings.leaseName()).isEqualTo("orders-controller");
          assertThat(settings.namespace()).hasValue("shop");
          assertThat(settings.environment().get(LeaseSettings.POD_NAME_VARIABLE))
              .hasValue("orders-controller-7d9f-abcde");
        });
  }

  @Test
  void theProbesAskThePathsOfSpringBootsPageWhichItsProbesTestRequestsOverHttp() throws IOException {
    Container container = container();
    List<String> page = Docs.blockAfter("<!-- deployment probes -->").stream()
        .map(PROBE_PATH::matcher).filter(Matcher::find).map(m -> m.group(1).strip()).toList();
    assertThat(page).containsExactly("/actuator/health/liveness", "/actuator/health/readiness");
    assertThat(container.getLivenessProbe().getHttpGet().getPath()).isEqualTo(page.get(0));
    assertThat(container.getStartupProbe().getHttpGet().getPath()).isEqualTo(page.get(0));
    assertThat(container.getReadinessProbe().getHttpGet().getPath()).isEqualTo(page.get(1));
    assertThat(container.getPorts()).singleElement()
        .satisfies(port -> assertThat(port.getContainerPort()).as("Spring Boot's server.port default").isEqualTo(8080));
  }
}
