// evalhost HTML report: filter to failing runs, expand or collapse every run. No network.
(function () {
  "use strict";
  var onlyFailed = document.getElementById("only-failed");
  if (onlyFailed) {
    onlyFailed.addEventListener("change", function () {
      document.body.classList.toggle("only-failed", onlyFailed.checked);
    });
  }
  function setAll(open) {
    var runs = document.querySelectorAll("details.run");
    for (var i = 0; i < runs.length; i++) {
      runs[i].open = open;
    }
  }
  var expand = document.getElementById("expand-all");
  var collapse = document.getElementById("collapse-all");
  if (expand) { expand.addEventListener("click", function () { setAll(true); }); }
  if (collapse) { collapse.addEventListener("click", function () { setAll(false); }); }
  document.body.setAttribute("data-ready", "true");
})();
