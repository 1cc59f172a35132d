/**
 * Components import their stylesheet (`import "./ParameterForm.css"`), which
 * only the Next build understands. A unit test that renders components to
 * HTML in Node imports this first: a .css file then loads as an empty module.
 * Styles are checked where they apply, in the browser tests.
 */
// Node has no other hook for CommonJS requires of a new extension (the
// module.register() hooks of Node 20 see ESM imports only).
require.extensions[".css"] = (module) => {
  module.exports = {};
};
