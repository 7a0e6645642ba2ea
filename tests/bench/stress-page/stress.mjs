/**
 * The page of tests/bench/engine-stress.mjs: the package and the answer function, on `window.stress`.
 */
import { createReader } from 'parquet-skim';
import { answerOf } from '../peers-page/answers.mjs';

window.stress = { createReader, answerOf };
document.body.dataset.ready = 'true';
