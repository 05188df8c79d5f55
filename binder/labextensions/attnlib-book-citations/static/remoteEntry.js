// Written by python -m tools.lab_citations from book/references.bib: do not edit.
// jupyterlab-myst prints a citation it cannot resolve as its key; this plugin shows
// the label of the book's bibliography instead (see tools/lab_citations.py).
var _JUPYTERLAB;
(function () {
  "use strict";
  var CITATIONS = {
    "AGS2008": {
      "names": "Ambrosio et al.",
      "year": "2008",
      "reference": "Luigi Ambrosio, Nicola Gigli, and Giuseppe Savaré. Gradient Flows in Metric Spaces and in the Space of Probability Measures. Lectures in Mathematics ETH Zürich. Birkhäuser, second edition, 2008."
    },
    "AKT1984": {
      "names": "Ajtai et al.",
      "year": "1984",
      "reference": "Miklós Ajtai, János Komlós, and Gábor Tusnády. On optimal matchings. Combinatorica, 4(4):259–264, 1984."
    },
    "AbsilMahonyAndrews2005": {
      "names": "Absil et al.",
      "year": "2005",
      "reference": "P.-A. Absil, Robert Mahony, and Ben Andrews. Convergence of the iterates of descent methods for analytic cost functions. SIAM Journal on Optimization, 16(2):531–547, 2005."
    },
    "Alcalde2025FrankWolfe": {
      "names": "Alcalde et al.",
      "year": "2025",
      "reference": "Albert Alcalde, Borjan Geshkovski, and Domènec Ruiz-Balet. Attention's forward pass and Frank–Wolfe. arXiv preprint arXiv:2508.09628, 2025."
    },
    "AtkinsonHan2012": {
      "names": "Atkinson and Han",
      "year": "2012",
      "reference": "Kendall Atkinson and Weimin Han. Spherical Harmonics and Approximations on the Unit Sphere: An Introduction. Volume 2044 of Lecture Notes in Mathematics. Springer, 2012."
    },
    "BKKRW2025": {
      "names": "Burger et al.",
      "year": "2025",
      "reference": "Martin Burger, Samira Kabri, Yury Korolev, Tim Roith, and Lukas Weigand. Analysis of mean-field models arising from self-attention dynamics in transformer architectures with layer normalization. arXiv preprint arXiv:2501.03096, 2025."
    },
    "BPA2024": {
      "names": "Bruno et al.",
      "year": "2024",
      "reference": "Giuseppe Bruno, Federico Pasqualotto, and Andrea Agazzi. Emergence of meta-stable clustering in mean-field transformer models. arXiv preprint arXiv:2410.23228, 2024."
    },
    "Balasubramanian2025Stationary": {
      "names": "Balasubramanian et al.",
      "year": "2025",
      "reference": "Krishnakumar Balasubramanian, Sayan Banerjee, and Philippe Rigollet. On the structure of stationary solutions to McKean–Vlasov equations with applications to noisy transformers. arXiv preprint arXiv:2510.20094, 2025."
    },
    "Ball1997": {
      "names": "Ball",
      "year": "1997",
      "reference": "Keith Ball. An elementary introduction to modern convex geometry. In Flavors of Geometry, volume 31 of Mathematical Sciences Research Institute Publications, pages 1–58. Cambridge University Press, 1997."
    },
    "BenamouBrenier2000": {
      "names": "Benamou and Brenier",
      "year": "2000",
      "reference": "Jean-David Benamou and Yann Brenier. A computational fluid mechanics solution to the Monge–Kantorovich mass transfer problem. Numerische Mathematik, 84(3):375–393, 2000."
    },
    "CACP2025": {
      "names": "Castin et al.",
      "year": "2025",
      "reference": "Valérie Castin, Pierre Ablin, José Antonio Carrillo, and Gabriel Peyré. A unified perspective on the dynamics of deep Transformers. arXiv preprint arXiv:2501.18322, 2025."
    },
    "CLPR2026": {
      "names": "Chen et al.",
      "year": "2026",
      "reference": "Shi Chen, Zhengjiang Lin, Yury Polyanskiy, and Philippe Rigollet. Critical attention scaling in long-context transformers. In International Conference on Learning Representations (ICLR). 2026. arXiv:2510.05554."
    },
    "CRMB2024": {
      "names": "Criscitiello et al.",
      "year": "2024",
      "reference": "Christopher Criscitiello, Quentin Rebjock, Andrew D. McRae, and Nicolas Boumal. Synchronization on circles and spheres with nonlinear interactions. arXiv preprint arXiv:2405.18273, 2024."
    },
    "Chen2025Quantitative": {
      "names": "Chen et al.",
      "year": "2025",
      "reference": "Shi Chen, Zhengjiang Lin, Yury Polyanskiy, and Philippe Rigollet. Quantitative clustering in mean-field transformer models. arXiv preprint arXiv:2504.14697, 2025."
    },
    "CohnKumar2007": {
      "names": "Cohn and Kumar",
      "year": "2007",
      "reference": "Henry Cohn and Abhinav Kumar. Universally optimal distribution of points on spheres. Journal of the American Mathematical Society, 20(1):99–148, 2007."
    },
    "DGR2026": {
      "names": "Duerinckx et al.",
      "year": "2026",
      "reference": "Mitia Duerinckx, Borjan Geshkovski, and Stefano Rossi. Kinetic theory for Transformers and the lost-in-the-middle phenomenon. arXiv preprint arXiv:2605.09213, 2026."
    },
    "DLMF": {
      "names": "Olver et al.",
      "year": "2023",
      "reference": "F. W. J. Olver, A. B. Olde Daalhuis, D. W. Lozier, B. I. Schneider, R. F. Boisvert, C. W. Clark, B. R. Miller, B. V. Saunders, H. S. Cohl, and M. A. McClain. NIST digital library of mathematical functions. \\url https://dlmf.nist.gov/, Release 1.1.10, 2023."
    },
    "Dobrushin1979": {
      "names": "Dobrushin",
      "year": "1979",
      "reference": "Roland L. Dobrushin. Vlasov equations. Functional Analysis and Its Applications, 13(2):115–123, 1979."
    },
    "Dong2021RankCollapse": {
      "names": "Dong et al.",
      "year": "2021",
      "reference": "Yihe Dong, Jean-Baptiste Cordonnier, and Andreas Loukas. Attention is not all you need: pure attention loses rank doubly exponentially with depth. In International Conference on Machine Learning (ICML). 2021. arXiv:2103.03404."
    },
    "FournierGuillin2015": {
      "names": "Fournier and Guillin",
      "year": "2015",
      "reference": "Nicolas Fournier and Arnaud Guillin. On the rate of convergence in Wasserstein distance of the empirical measure. Probability Theory and Related Fields, 162(3–4):707–738, 2015. arXiv:1312.2128."
    },
    "GKPR2024": {
      "names": "Geshkovski et al.",
      "year": "2024a",
      "reference": "Borjan Geshkovski, Hugo Koubbi, Yury Polyanskiy, and Philippe Rigollet. Dynamic metastability in the self-attention model. arXiv preprint arXiv:2410.06833, 2024."
    },
    "GLPR2023": {
      "names": "Geshkovski et al.",
      "year": "2025",
      "reference": "Borjan Geshkovski, Cyril Letrouit, Yury Polyanskiy, and Philippe Rigollet. A mathematical perspective on Transformers. Bulletin of the American Mathematical Society, 2025. arXiv:2312.10794v4 (12 Aug 2024); the theorem, section and appendix numbers cited in this book are those of this arXiv version."
    },
    "GLPR2023Emergence": {
      "names": "Geshkovski et al.",
      "year": "2023",
      "reference": "Borjan Geshkovski, Cyril Letrouit, Yury Polyanskiy, and Philippe Rigollet. The emergence of clusters in self-attention dynamics. In Advances in Neural Information Processing Systems (NeurIPS). 2023. arXiv:2305.05465."
    },
    "GRS2024": {
      "names": "Geshkovski et al.",
      "year": "2024b",
      "reference": "Borjan Geshkovski, Philippe Rigollet, and Yihang Sun. On the number of modes of Gaussian kernel density estimators. arXiv preprint arXiv:2412.09080, 2024."
    },
    "Karagodin2024Causal": {
      "names": "Karagodin et al.",
      "year": "2024",
      "reference": "Nikita Karagodin, Yury Polyanskiy, and Philippe Rigollet. Clustering in causal attention masking. In Advances in Neural Information Processing Systems (NeurIPS). 2024. arXiv:2411.04990."
    },
    "Kim2021Lipschitz": {
      "names": "Kim et al.",
      "year": "2021",
      "reference": "Hyunjik Kim, George Papamakarios, and Andriy Mnih. The Lipschitz constant of self-attention. In International Conference on Machine Learning (ICML). 2021."
    },
    "Kim2025PeriLN": {
      "names": "Kim et al.",
      "year": "2025",
      "reference": "Jeonghoon Kim, Byeongchan Lee, Cheonbok Park, Yeontaek Oh, Beomjun Kim, Taehwan Yoo, Seongjin Shin, Dongyoon Han, Jinwoo Shin, and Kang Min Yoo. Peri-LN: revisiting normalization layer in the Transformer architecture. In International Conference on Machine Learning (ICML). 2025. arXiv:2502.02732."
    },
    "Kuramoto1984": {
      "names": "Kuramoto",
      "year": "1984",
      "reference": "Yoshiki Kuramoto. Chemical Oscillations, Waves, and Turbulence. Springer, 1984."
    },
    "Lan2020ALBERT": {
      "names": "Lan et al.",
      "year": "2020",
      "reference": "Zhenzhong Lan, Mingda Chen, Sebastian Goodman, Kevin Gimpel, Piyush Sharma, and Radu Soricut. ALBERT: a lite BERT for self-supervised learning of language representations. In International Conference on Learning Representations (ICLR). 2020. arXiv:1909.11942."
    },
    "LeeEtAl2019": {
      "names": "Lee et al.",
      "year": "2019",
      "reference": "Jason D. Lee, Ioannis Panageas, Georgios Piliouras, Max Simchowitz, Michael I. Jordan, and Benjamin Recht. First-order methods almost always avoid strict saddle points. Mathematical Programming, 176:311–337, 2019. arXiv:1710.07406."
    },
    "Liu2024Lost": {
      "names": "Liu et al.",
      "year": "2024",
      "reference": "Nelson F. Liu, Kevin Lin, John Hewitt, Ashwin Paranjape, Michele Bevilacqua, Fabio Petroni, and Percy Liang. Lost in the middle: how language models use long contexts. Transactions of the Association for Computational Linguistics, 12:157–173, 2024. arXiv:2307.03172."
    },
    "Lojasiewicz1963": {
      "names": "Łojasiewicz",
      "year": "1963",
      "reference": "Stanisław Łojasiewicz. Une propriété topologique des sous-ensembles analytiques réels. In Les Équations aux Dérivées Partielles (Paris, 1962), pages 87–89. Éditions du Centre National de la Recherche Scientifique, Paris, 1963."
    },
    "MarkdahlThunbergGoncalves2018": {
      "names": "Markdahl et al.",
      "year": "2018",
      "reference": "Johan Markdahl, Johan Thunberg, and Jorge Gonçalves. Almost global consensus on the n-sphere. IEEE Transactions on Automatic Control, 63(6):1664–1675, 2018. arXiv:1610.00540."
    },
    "Mun2026PhaseTransitions": {
      "names": "Mun and Rosenzweig",
      "year": "2026",
      "reference": "Kyunghoo Mun and Matthew Rosenzweig. Phase transitions for the noisy transformer model in arbitrary dimension. arXiv preprint arXiv:2606.05140, 2026."
    },
    "Nutz2021": {
      "names": "Nutz",
      "year": "2021",
      "reference": "Marcel Nutz. Introduction to entropic optimal transport. Lecture notes, Columbia University, 2021."
    },
    "OttAntonsen2008": {
      "names": "Ott and Antonsen",
      "year": "2008",
      "reference": "Edward Ott and Thomas M. Antonsen. Low dimensional behavior of large systems of globally coupled oscillators. Chaos, 18(3):037113, 2008. arXiv:0806.0004."
    },
    "PRY2025": {
      "names": "Polyanskiy et al.",
      "year": "2025",
      "reference": "Yury Polyanskiy, Philippe Rigollet, and Andrew Yao. Synchronization of mean-field models on the circle. arXiv preprint arXiv:2507.22857, 2025."
    },
    "Press2022ALiBi": {
      "names": "Press et al.",
      "year": "2022",
      "reference": "Ofir Press, Noah A. Smith, and Mike Lewis. Train short, test long: attention with linear biases enables input length extrapolation. In International Conference on Learning Representations (ICLR). 2022. arXiv:2108.12409."
    },
    "Rigollet2025MeanField": {
      "names": "Rigollet",
      "year": "2025",
      "reference": "Philippe Rigollet. The mean-field dynamics of Transformers. arXiv preprint arXiv:2512.01868, 2025."
    },
    "RoyVetterli2007": {
      "names": "Roy and Vetterli",
      "year": "2007",
      "reference": "Olivier Roy and Martin Vetterli. The effective rank: a measure of effective dimensionality. In 15th European Signal Processing Conference (EUSIPCO), 606–610. 2007."
    },
    "Sander2022Sinkformers": {
      "names": "Sander et al.",
      "year": "2022",
      "reference": "Michael E. Sander, Pierre Ablin, Mathieu Blondel, and Gabriel Peyré. Sinkformers: Transformers with doubly stochastic attention. In International Conference on Artificial Intelligence and Statistics (AISTATS). 2022. arXiv:2110.11773."
    },
    "Shalova2024Stationary": {
      "names": "Shalova and Schlichting",
      "year": "2024",
      "reference": "Anna Shalova and André Schlichting. Solutions of stationary McKean–Vlasov equation on a high-dimensional sphere and other Riemannian manifolds. arXiv preprint arXiv:2412.14813, 2024."
    },
    "Shub1987": {
      "names": "Shub",
      "year": "1987",
      "reference": "Michael Shub. Global Stability of Dynamical Systems. Springer, New York, 1987."
    },
    "Strogatz2000": {
      "names": "Strogatz",
      "year": "2000",
      "reference": "Steven H. Strogatz. From Kuramoto to Crawford: exploring the onset of synchronization in populations of coupled oscillators. Physica D: Nonlinear Phenomena, 143(1–4):1–20, 2000."
    },
    "Vaswani2017": {
      "names": "Vaswani et al.",
      "year": "2017",
      "reference": "Ashish Vaswani, Noam Shazeer, Niki Parmar, Jakob Uszkoreit, Llion Jones, Aidan N. Gomez, Łukasz Kaiser, and Illia Polosukhin. Attention is all you need. In Advances in Neural Information Processing Systems (NeurIPS). 2017."
    },
    "Villani2009OTON": {
      "names": "Villani",
      "year": "2009",
      "reference": "Cédric Villani. Optimal Transport: Old and New. Volume 338 of Grundlehren der mathematischen Wissenschaften. Springer, 2009."
    },
    "WeedBach2019": {
      "names": "Weed and Bach",
      "year": "2019",
      "reference": "Jonathan Weed and Francis Bach. Sharp asymptotic and finite-sample rates of convergence of empirical measures in Wasserstein distance. Bernoulli, 25(4A):2620–2648, 2019. arXiv:1707.00087."
    },
    "Wendel1962": {
      "names": "Wendel",
      "year": "1962",
      "reference": "James G. Wendel. A problem in geometric probability. Mathematica Scandinavica, 11:109–111, 1962."
    },
    "Xiao2024Sinks": {
      "names": "Xiao et al.",
      "year": "2024",
      "reference": "Guangxuan Xiao, Yuandong Tian, Beidi Chen, Song Han, and Mike Lewis. Efficient streaming language models with attention sinks. In International Conference on Learning Representations (ICLR). 2024. arXiv:2309.17453."
    }
  };
  var STYLE = [
    ".attnlib-cite { color: inherit !important; }",
    ".attnlib-cite > svg { display: none; }",
    ".cite-group.attnlib-parenthetical::before { content: '['; }",
    ".cite-group.attnlib-parenthetical::after { content: ']'; }"
  ].join("\n");

  function show(span) {
    var last = span.lastChild;
    var key = span.getAttribute("data-cite-key") ||
      (last && last.nodeType === 3 ? last.nodeValue : span.textContent).trim();
    var entry = CITATIONS[key];
    if (!entry) { return; }
    // jupyterlab-myst draws {cite}`a` as a lone citation, and {cite}`a,b` and
    // {cite:t}`a` alike as a group; the book writes {cite:t} with one key only
    var group = span.parentElement && span.parentElement.closest(".cite-group");
    var narrative = group !== null && group.children.length === 1;
    var text = narrative ? entry.names + " [" + entry.year + "]"
                         : entry.names + ", " + entry.year;
    if (!group) { text = "[" + text + "]"; }
    if (group && !narrative && !group.classList.contains("attnlib-parenthetical")) {
      group.classList.add("attnlib-parenthetical");
    }
    var node = span.lastChild;
    if (!node || node.nodeType !== 3) {
      node = document.createTextNode("");
      span.appendChild(node);
    }
    if (node.nodeValue !== text) { node.nodeValue = text; }
    if (span.getAttribute("data-cite-key") !== key) {
      span.setAttribute("data-cite-key", key);
    }
    if (span.title !== entry.reference) { span.title = entry.reference; }
    if (!span.classList.contains("attnlib-cite")) {
      span.classList.add("attnlib-cite");
    }
  }

  function showAll() {
    var found = document.querySelectorAll(
      '.jp-Notebook span[title="Citation Not Found"], .jp-Notebook span.attnlib-cite'
    );
    for (var i = 0; i < found.length; i++) { show(found[i]); }
  }

  var plugin = {
    id: "attnlib-book-citations:plugin",
    description: "Citations shown with the labels of the book's bibliography.",
    autoStart: true,
    activate: function () {
      var style = document.createElement("style");
      style.textContent = STYLE;
      document.head.appendChild(style);
      var pending = false;
      new MutationObserver(function () {
        if (pending) { return; }
        pending = true;
        window.requestAnimationFrame(function () { pending = false; showAll(); });
      }).observe(document.body, {childList: true, subtree: true, characterData: true});
      showAll();
    }
  };

  (_JUPYTERLAB = typeof _JUPYTERLAB === "undefined" ? {} : _JUPYTERLAB)["attnlib-book-citations"] = {
    init: function () {},
    get: function (module) {
      if (module !== "./extension") {
        return Promise.reject(new Error("no module " + module + " in attnlib-book-citations"));
      }
      return Promise.resolve(function () {
        return {__esModule: true, default: plugin};
      });
    }
  };
})();
