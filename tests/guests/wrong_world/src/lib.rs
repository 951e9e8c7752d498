//! A well-formed component that exports a calculator world instead of the evalhost
//! grader world. The host must refuse it at load time with a named error.

#![allow(unsafe_code)] // the export macro's generated glue

wit_bindgen::generate!({
    inline: "
        package evalhost-test:wrong-world;

        world calculator {
            export add: func(a: u32, b: u32) -> u32;
        }
    ",
    world: "calculator",
});

struct Component;

impl Guest for Component {
    fn add(a: u32, b: u32) -> u32 {
        a.wrapping_add(b)
    }
}

export!(Component);
