package io.github.electionpolicy.springboot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.github.electionpolicy.InvalidElectionSettingException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/**
 * Outside a pod, with a client that has no namespace and no {@code election.namespace}, the start-up report tells
 * a Spring user the property to set, in the description too: the library's own message calls
 * {@code LeaseSettings.builder().namespace(...)}, which a Spring application does not write.
 */
@ExtendWith(OutputCaptureExtension.class)
class NamespaceFailureReportTest {

  @SpringBootConfiguration(proxyBeanMethods = false)
  @EnableAutoConfiguration
  static class Application {}

  @Test
  void aMissingNamespaceIsReportedAsThePropertyToSet(CapturedOutput output) {
    KubernetesClient withoutNamespace = new KubernetesClientBuilder()
        .withConfig(new ConfigBuilder(Config.empty()).withMasterUrl("http://127.0.0.1:9/").build()).build();
    try {
      Throwable failure = catchThrowable(() -> new SpringApplicationBuilder(Application.class)
          .web(WebApplicationType.NONE)
          .initializers(context -> context.getBeanFactory().registerSingleton("kubernetesClient", withoutNamespace))
          .run("--spring.main.banner-mode=off", "--election.lease-name=orders-controller"));

      InvalidElectionSettingException cause = Contexts.settingFailure(failure);
      assertThat(cause.setting()).isEqualTo("namespace");
      assertThat(cause.getMessage()).contains("call LeaseSettings.builder().namespace(...)");
      assertThat(output.getOut() + output.getErr())
          .contains("APPLICATION FAILED TO START")
          .contains("namespace=<missing> is not valid: accepted values are an explicit namespace")
          .contains("fix: set the property election.namespace, or run in a pod, or set the namespace of the client "
              + "(kubeconfig context or KUBERNETES_NAMESPACE)")
          .doesNotContain("LeaseSettings.builder()")
          .contains("Change the property election.namespace");
    } finally {
      withoutNamespace.close();
    }
  }
}
